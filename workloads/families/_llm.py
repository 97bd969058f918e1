"""``hf:<org>/<LLM>@prefill`` and ``@decode``: an LLM's two steps as a server runs them (docs/llms.md).

The model is its transformers class built from the published architecture (``_llm_configs``) with
random weights. Its tokens are flattened into one dim, as vLLM passes them (``num_tokens``), and
that dim is the workload's one dynamic dim (role ``tokens``; ``mark_unbacked`` with the size as its
hint where the build takes one):

- prefill: ``fn(input_ids [N], position_ids [N])``: the prompts' tokens packed into one sequence,
  positions restarting at each prompt (transformers masks each prompt off from the others), the
  next-token logits of the last position (``logits_to_keep=1``). Full: 1 prompt x 512 (the
  background reading's Llama-2 7B case); the second shape packs 2 prompts of 128.
- decode: ``fn(input_ids [N])``: one new token for each of N sequences against transformers'
  ``StaticCache`` (allocated once, filled with random keys and values up to the decode position,
  updated in place: the gpt-fast way); the next-token logits [N, vocab]. Each call decodes at the
  same position (the cache's lengths are reset first), so every call is the same step. Full: 8
  sequences, a cache of 2048 positions, decoding at 1024; the second shape 4 sequences (views of
  the same cache).

Whisper (encoder-decoder): prefill runs the encoder over 30 s of log-mel features and the decoder
over the prompt tokens; decode is one decoder token against a self-attention ``StaticCache`` and
cross-attention keys from the encoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from workloads.base import DynamicDim, Instance
from workloads.families._api import FamilyWorkload
from workloads.families._llm_configs import LLMS, LlmFacts
from workloads.names import DECODE, PREFILL, STEPS
from workloads.suite._common import input_generator, randint, randn

TOKENS = "tokens"  # the role of the flattened token dim (contract.dims: ``--dims tokens``)


@dataclass(frozen=True)
class _Shape:
    prompts: tuple[int, int]  # prefill: prompts packed, variant 0 and 1
    prompt_len: tuple[int, int]
    sequences: tuple[int, int]  # decode: sequences (one new token each), variant 0 and 1
    cache_len: int  # decode: the static cache's positions
    position: int  # decode: where the new token goes (the cache holds this many past tokens)
    audio_frames: int  # whisper: log-mel frames (2 x max_source_positions)


SHAPES = {"full": _Shape(prompts=(1, 2), prompt_len=(512, 128), sequences=(8, 4), cache_len=2048, position=1024, audio_frames=3000),
          "tiny": _Shape(prompts=(2, 2), prompt_len=(16, 8), sequences=(4, 2), cache_len=32, position=16, audio_frames=32)}
# Whisper's decoder takes at most max_target_positions (448) tokens.
WHISPER_FULL = _Shape(prompts=(1, 2), prompt_len=(128, 32), sequences=(8, 4), cache_len=448, position=224, audio_frames=3000)


def shape_of(facts: LlmFacts, size: str) -> _Shape:
    return WHISPER_FULL if facts.encoder_decoder and size == "full" else SHAPES[size]


class LlmWorkload(FamilyWorkload):
    def __init__(self, *, name: str, train: bool, axes: tuple[str, ...], model: str, step: str = ""):
        if step not in (PREFILL, DECODE) or train:
            raise ValueError(f"an LLM runs as @{PREFILL} or @{DECODE} (got {'@' + step if step else 'no step'}"
                             f"{' with train' if train else ''}; steps: {', '.join(STEPS)})")
        self.facts = LLMS[model]
        self.model_name, self.step = model, step
        inputs = ("input_features", "input_ids", "position_ids") if self.facts.encoder_decoder else ("input_ids", "position_ids")
        self.input_names = inputs if step == PREFILL else ("input_ids",)
        dims = {DynamicDim(n, 0, TOKENS, hint=True): TOKENS for n in self.input_names if n != "input_features"}
        super().__init__(name=name, train=False, axes=axes, dims=dims)
        self.category = f"llm-{step}"
        self.dtypes = ("bfloat16", "float16", "float32")
        full = shape_of(self.facts, "full")
        shape = (f"{full.prompts[0]} prompt x {full.prompt_len[0]} tokens" if step == PREFILL else
                 f"{full.sequences[0]} sequences x 1 token, a static cache of {full.cache_len} at position {full.position}")
        self.description = (f"transformers {self.facts.cls} from {model}'s published config ({self.facts.source}), random weights; "
                            f"{step} with the tokens flattened into one dim; full: {shape}; tiny: 2 layers, hidden 64"
                            + (f". {self.facts.note}" if self.facts.note else "") + ".")

    def config(self, transformers, size: str):
        cls = getattr(transformers, self.facts.cls)
        values = {**self.facts.config, **(self.facts.tiny if size == "tiny" else {})}
        config = cls.config_class(**values)
        for key in dir(config):  # no dropout: compiled and eager draw different random masks
            if "drop" in key and isinstance(getattr(config, key, None), float):
                setattr(config, key, 0.0)
        return cls, config

    def build(self, *, size, device, dtype, seed=0):
        import transformers  # noqa: PLC0415 (listing a family imports no model library)

        cls, config = self.config(transformers, size)
        torch.manual_seed(seed)
        with torch.device(device):
            model = cls(config).to(device=device, dtype=dtype).eval().requires_grad_(False)
        shape = shape_of(self.facts, size)
        make_inputs = self._prefill_inputs(config, shape, device, seed, dtype) if self.step == PREFILL else \
            self._decode_inputs(config, shape, device, seed)
        bind = (lambda models: _prefill_step(models[0], self.facts)) if self.step == PREFILL else \
            (lambda models: _decode_step(transformers, models[0], self.facts, shape, seed))
        return Instance(fn=bind((model,)), make_inputs=make_inputs, input_names=self.input_names, modules=(model,),
                        implementation=f"transformers.{self.facts.cls}" + (" + StaticCache" if self.step == DECODE else ""),
                        rebind=bind)

    def _prefill_inputs(self, config, shape: _Shape, device, seed: int, dtype):
        vocab = config.vocab_size

        def make_inputs(variant: int):
            prompts, length = shape.prompts[variant], shape.prompt_len[variant]
            gen = input_generator(device, seed, variant)
            ids = randint(vocab, (prompts * length,), gen, device)
            positions = torch.arange(length, device=device).repeat(prompts)
            if not self.facts.encoder_decoder:
                return ids, positions
            features = randn((prompts, config.num_mel_bins, shape.audio_frames), gen, device, dtype)
            return features, ids, positions

        return make_inputs

    def _decode_inputs(self, config, shape: _Shape, device, seed: int):
        def make_inputs(variant: int):
            return (randint(config.vocab_size, (shape.sequences[variant],), input_generator(device, seed, variant), device),)

        return make_inputs


def _prefill_step(model: torch.nn.Module, facts: LlmFacts):
    if facts.encoder_decoder:
        def whisper_prefill(input_features, input_ids, position_ids):
            prompts = input_features.shape[0]
            ids = input_ids.view(prompts, -1)  # the decoder's prompts: one per audio
            out = model(input_features=input_features, decoder_input_ids=ids, use_cache=False)
            return out.logits[:, -1, :]

        return whisper_prefill

    def prefill(input_ids, position_ids):
        out = model(input_ids=input_ids[None], position_ids=position_ids[None], use_cache=False, logits_to_keep=1)
        return out.logits[0]

    return prefill


def _decode_step(transformers, model: torch.nn.Module, facts: LlmFacts, shape: _Shape, seed: int):
    """A step over ``model`` with its own static cache, filled with seeded random keys and values."""
    config = model.config.get_text_config(decoder=True)
    weight = next(model.parameters())
    batch = max(shape.sequences)
    cache = transformers.StaticCache(config=config, max_cache_len=shape.cache_len)
    if facts.encoder_decoder:  # the decoder's attention, as built (its config's head counts are the encoder's)
        attention = model.model.decoder.layers[0].self_attn
        heads, head_dim = attention.num_heads, attention.head_dim
    else:
        heads = config.num_key_value_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    cache.early_initialization(batch_size=batch, num_heads=heads, head_dim=head_dim, dtype=weight.dtype, device=weight.device)
    gen = input_generator(weight.device, seed, 2)
    full: list[tuple[torch.Tensor, torch.Tensor]] = []
    for layer in cache.layers:
        filled = min(shape.position, layer.keys.shape[2])
        for tensor in (layer.keys, layer.values):
            tensor[:, :, :filled] = randn((batch, heads, filled, head_dim), gen, weight.device, weight.dtype)
        full.append((layer.keys, layer.values))
    encoder = _encoder_states(model, config, shape, gen, weight) if facts.encoder_decoder else None

    def set_cache(sequences: int) -> None:
        """The cache's views for ``sequences`` and its lengths at the decode position (every call the same step)."""
        for layer, (keys, values) in zip(cache.layers, full):
            layer.keys, layer.values = keys[:sequences], values[:sequences]
            layer.cumulative_length.fill_(shape.position)
            if getattr(layer, "is_sliding", False):
                layer.cumulative_length_int = shape.position

    def decode(input_ids):
        sequences = input_ids.shape[0]
        set_cache(sequences)
        if encoder is not None:
            out = model(encoder_outputs=(encoder[:sequences],), decoder_input_ids=input_ids[:, None],
                        past_key_values=_whisper_cache(transformers, cache), use_cache=True)
        else:
            out = model(input_ids=input_ids[:, None], past_key_values=cache, use_cache=True)
        return out.logits[:, -1, :]

    return decode


def _encoder_states(model, config, shape: _Shape, gen, weight) -> torch.Tensor:
    """Whisper's encoder output for the decode step (computed once: a server encodes each audio once)."""
    features = randn((max(shape.sequences), config.num_mel_bins, shape.audio_frames), gen, weight.device, weight.dtype)
    with torch.no_grad():
        return model.model.encoder(features).last_hidden_state


def _whisper_cache(transformers, self_attention: Any):
    """The decoder's cache: the static self-attention cache; cross-attention recomputed from the encoder states."""
    return transformers.EncoderDecoderCache(self_attention, transformers.DynamicCache())
