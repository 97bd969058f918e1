"""``hf:<ModelClass>``: Hugging Face transformers models built from their config class's defaults with
random weights (no hub access), inputs as PyTorch's harness makes them (benchmarks/dynamo/huggingface.py).

The list and batch sizes are the harness's ``huggingface_models_list.txt``. Its sequence lengths by
model name: 128 for Blenderbot and MobileBert (and anything unnamed), 256 TrOCR, 512 for the
BERT-like encoders, 1024 for GPT2/Bart/T5/PLBart/MBart/Longformer, 2048 for OPT. Inputs are random
token ids [batch, sequence] (all zeros for Roberta, as the harness does), the last token EOS for
Bart-like models, the same ids as ``decoder_input_ids`` for encoder-decoders; a training step adds
the labels its head takes a loss from. Dynamic: batch and sequence of every token input.

The harness reads six of its models' configs from the hub; here they are the config class's defaults
(``note`` says which class). Its seven LLMs (and Llama-2 7B) are built from their published configs
written down as data (``_llm_configs``) and run as ``@prefill`` or ``@decode`` (``_llm``, docs/llms.md).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass


from workloads.base import DynamicDim
from workloads.families._api import Family, FamilyModel, FamilyWorkload, import_problem
from workloads.families._llm import LlmWorkload
from workloads.families._llm_configs import LLMS
from workloads.families._steps import TINY_BATCH, instance, second_size, seeded_model
from workloads.registry import register_family
from workloads.suite._common import input_generator, randint

_MODELS = (
    ("AlbertForMaskedLM", 8), ("AlbertForQuestionAnswering", 8), ("AllenaiLongformerBase", 8), ("BartForCausalLM", 8),
    ("BartForConditionalGeneration", 4), ("BertForMaskedLM", 32), ("BertForQuestionAnswering", 32),
    ("BlenderbotForCausalLM", 32), ("BlenderbotForConditionalGeneration", 16), ("BlenderbotSmallForCausalLM", 256),
    ("BlenderbotSmallForConditionalGeneration", 128), ("CamemBert", 32), ("DebertaV2ForMaskedLM", 8),
    ("DebertaV2ForQuestionAnswering", 8), ("DistilBertForMaskedLM", 256), ("DistilBertForQuestionAnswering", 512),
    ("DistillGPT2", 32), ("ElectraForCausalLM", 64), ("ElectraForQuestionAnswering", 128),
    ("GPT2ForSequenceClassification", 8), ("GPTJForCausalLM", 1), ("GPTJForQuestionAnswering", 1),
    ("GPTNeoForCausalLM", 32), ("GPTNeoForSequenceClassification", 32), ("GoogleFnet", 32), ("LayoutLMForMaskedLM", 32),
    ("LayoutLMForSequenceClassification", 32), ("M2M100ForConditionalGeneration", 64), ("MBartForCausalLM", 8),
    ("MBartForConditionalGeneration", 4), ("MT5ForConditionalGeneration", 32), ("MegatronBertForCausalLM", 16),
    ("MegatronBertForQuestionAnswering", 16), ("MobileBertForMaskedLM", 256), ("MobileBertForQuestionAnswering", 256),
    ("OPTForCausalLM", 4), ("PLBartForCausalLM", 16), ("PLBartForConditionalGeneration", 8), ("PegasusForCausalLM", 128),
    ("PegasusForConditionalGeneration", 64), ("RobertaForCausalLM", 32), ("RobertaForQuestionAnswering", 32),
    ("T5ForConditionalGeneration", 8), ("T5Small", 8), ("TrOCRForCausalLM", 64), ("XGLMForCausalLM", 32),
    ("XLNetLMHeadModel", 16), ("YituTechConvBert", 32),
)
# Harness names that are no transformers class: the class built instead, and config values changed
# from its defaults (DistilGPT2 is GPT-2 with 6 layers).
_ALIASES = {
    "AllenaiLongformerBase": ("LongformerForMaskedLM", {}), "CamemBert": ("CamembertForMaskedLM", {}),
    "DistillGPT2": ("GPT2LMHeadModel", {"n_layer": 6}), "GoogleFnet": ("FNetForMaskedLM", {}),
    "T5Small": ("T5ForConditionalGeneration", {}), "YituTechConvBert": ("ConvBertForMaskedLM", {}),
}
# Models whose ops have no bfloat16 kernel (FNet's FFT): float32 only, as the harness's only_fp32 list.
_FLOAT32_ONLY = ("GoogleFnet",)
_PAD_ZERO = ("GPT2ForSequenceClassification", "GPTNeoForSequenceClassification", "GPTJForSequenceClassification")
# The tiny size: every one of these config fields that the config has (attribute_map included).
_TINY_CONFIG = {
    **dict.fromkeys(("num_hidden_layers", "encoder_layers", "decoder_layers", "num_decoder_layers"), 2),
    **dict.fromkeys(("hidden_size", "d_model"), 64),
    **dict.fromkeys(("num_attention_heads", "encoder_attention_heads", "decoder_attention_heads"), 2),
    **dict.fromkeys(("intermediate_size", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff"), 128),
}
TINY_SEQUENCE = 32


def sequence_length(name: str) -> int:
    """The harness's sequence length for a model of its list (see the module's docstring)."""
    if name.startswith("Blenderbot") or name.startswith("MobileBert"):
        return 128
    if name.startswith(("GPT2", "Bart", "T5", "PLBart", "MBart")) or name == "AllenaiLongformerBase":
        return 1024
    if name.startswith("OPT"):
        return 2048
    if name.startswith(("Albert", "Deberta", "Layout", "Electra", "XLNet", "MegatronBert", "Bert", "Roberta")) or name in (
            "DistillGPT2", "GoogleFnet", "YituTechConvBert"):
        return 512
    if name == "TrOCRForCausalLM":
        return 256
    return 128


@dataclass(frozen=True)
class _Shape:
    batch: int
    sequence: int


class HfWorkload(FamilyWorkload):
    def __init__(self, *, name: str, train: bool, axes: tuple[str, ...], model: str, cls: str, batch: int,
                 config: dict | None = None, step: str = ""):
        train = train or step == "train_step"
        self.cls_name, self.harness_name, self.batch, self.config_changes = cls, model, batch, dict(config or {})
        self.encoder_decoder = cls.endswith("ForConditionalGeneration")
        inputs = ["input_ids"] + (["decoder_input_ids"] if self.encoder_decoder else []) + (self._label_inputs() if train else [])
        dims = {}
        for input_name in inputs:
            if batch > 1:  # a batch of one specialises (0/1 specialisation): nothing to mark
                dims[DynamicDim(input_name, 0)] = "batch"
            if input_name not in ("start_positions", "end_positions") and not (input_name == "labels" and cls.endswith("SequenceClassification")):
                dims[DynamicDim(input_name, 1)] = "sequence"
        self.input_names = tuple(inputs)
        super().__init__(name=name, train=train, axes=axes, dims=dims, step=step)
        if model in _FLOAT32_ONLY:
            self.dtypes = ("float32",)
        self.description = (f"transformers {cls} from {cls}'s config class defaults, random weights, "
                            f"{self.step_text}; full: batch {batch} x {sequence_length(model)} "
                            f"tokens (PyTorch's harness); tiny: 2 layers, hidden 64, batch {TINY_BATCH} x {TINY_SEQUENCE}.")

    def _label_inputs(self) -> list[str]:
        if self.cls_name.endswith("QuestionAnswering"):
            return ["start_positions", "end_positions"]
        return ["labels"]

    def _config(self, transformers, size: str):
        cls = getattr(transformers, self.cls_name)
        config = cls.config_class()
        for key, value in self.config_changes.items():
            setattr(config, key, value)
        if self.cls_name in _PAD_ZERO or self.cls_name.startswith("Roberta"):
            config.pad_token_id = 0  # the harness's setting: a batch of more than one needs a pad token
        if size == "tiny":
            for key, value in _TINY_CONFIG.items():
                if hasattr(config, key):
                    setattr(config, key, value)
        for key in dir(config):  # no dropout: compiled and eager draw different random masks
            if "drop" in key and isinstance(getattr(config, key, None), float):
                setattr(config, key, 0.0)
        if hasattr(config, "use_cache"):
            config.use_cache = False
        return cls, config

    def build(self, *, size, device, dtype, seed=0):
        import transformers  # noqa: PLC0415 (listing a family imports no model library)

        cls, config = self._config(transformers, size)
        model = seeded_model(lambda: cls(config), device=device, dtype=dtype, seed=seed, train=self.train)
        shape = _Shape(TINY_BATCH, TINY_SEQUENCE) if size == "tiny" else _Shape(self.batch, sequence_length(self.harness_name))
        vocab = config.vocab_size
        eos = getattr(config, "eos_token_id", None) if "Bart" in self.cls_name else None
        classes = getattr(config, "num_labels", 2)

        def make_inputs(variant: int):
            batch = second_size(shape.batch) if variant == 1 and self.varies("batch") and shape.batch > 1 else shape.batch
            seq = second_size(shape.sequence) if variant == 1 and self.varies("sequence") else shape.sequence
            gen = input_generator(device, seed, variant)
            ids = randint(1 if self.cls_name.startswith("Roberta") else vocab, (batch, seq), gen, device)
            if isinstance(eos, int):
                ids[:, -1] = eos
            values = {"input_ids": ids, "decoder_input_ids": ids}
            if self.cls_name.endswith("QuestionAnswering"):
                values["start_positions"] = randint(seq, (batch,), gen, device)
                values["end_positions"] = randint(seq, (batch,), gen, device)
            elif self.cls_name.endswith("SequenceClassification"):
                values["labels"] = randint(max(classes - 1, 1), (batch,), gen, device)
            else:
                values["labels"] = randint(vocab, (batch, seq), gen, device)
            return tuple(values[name] for name in self.input_names)

        def loss(output, kwargs):
            return output.loss.float()

        return instance(model, make_inputs, self.input_names, loss=loss if self.train else None,
                        implementation=f"transformers.{self.cls_name}", whole_step=self.whole_step, device=device)


class HfFamily(Family):
    prefix = "hf"
    description = "Hugging Face transformers models from their configs, random weights; PyTorch's harness list and batch sizes"

    def models(self):
        models = []
        for name, batch in _MODELS:
            cls, config = _ALIASES.get(name, (name, {}))
            note = f"built as {cls}" + (f" with {config}" if config else "") + " from its config class's defaults" if name in _ALIASES else ""
            models.append(FamilyModel(name, factory=HfWorkload, args={"model": name, "cls": cls, "batch": batch, "config": config}, note=note))
        return models + [llm_model(name) for name in LLMS]

    def missing(self, model):
        transformers, problem = import_problem("transformers")
        if transformers is None:
            return problem
        cls = LLMS[model.name].cls if model.name in LLMS else model.args["cls"]
        if cls not in _names(transformers):
            return f"transformers {transformers.__version__} has no class {cls}"
        if model.name in LLMS and "StaticCache" not in _names(transformers):
            return f"transformers {transformers.__version__} has no StaticCache (the decode step's KV cache)"
        return ""


@functools.lru_cache(maxsize=1)
def _names(transformers) -> frozenset[str]:
    """What the installed transformers offers, read once a process: its ``dir()`` lists 6,280 names
    (0.6 s a call on a busy 2-core host; listing the family asks 64 times)."""
    return frozenset(dir(transformers))


def llm_model(name: str) -> FamilyModel:
    """An LLM of the harness's list (or Llama-2 7B): built from its published config, run as @prefill or @decode."""
    facts = LLMS[name]
    return FamilyModel(name, factory=LlmWorkload, args={"model": name},
                       note=f"{facts.cls} from its published config; @prefill, @decode" + (f"; {facts.note}" if facts.note else ""))


register_family(HfFamily())
