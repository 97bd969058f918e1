"""``bert_encoder``: a BERT-base encoder forward over a dynamically padded batch.

Why it is in the suite: encoder inference/fine-tuning with *dynamic padding* (each batch padded to
its longest sequence) is the commonest source of recompiles for NLP users: the sequence length
changes every batch. The attention mask marks the padding; the sequence length is dynamic.

``fn(input_ids [B, T], attention_mask [B, T]) -> last hidden state [B, T, hidden]``. Uses
transformers' ``BertModel`` from a ``BertConfig`` (random weights, SDPA attention), and only it: where
transformers cannot build it the case fails (eager_error) naming why, never another model under this
name (``_common.library_model``). Results measured before transformers was a runner requirement
record ``workloads.suite.bert.BertEncoder``, our own encoder then, as their implementation.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import (
    freeze,
    input_generator,
    library_model,
    pick,
    randint,
    tolerances,
    variant_value,
)


@dataclass(frozen=True)
class _Cfg:
    vocab: int
    dim: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    batch: int
    seq: tuple[int, int]  # padded length: variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(vocab=128, dim=32, layers=2, heads=2, ffn=64, max_positions=64, batch=4, seq=(16, 24)),
    # BERT-base (12 x 768, 12 heads, FFN 3072), batch 32 padded to 256 tokens.
    "full": _Cfg(vocab=30_522, dim=768, layers=12, heads=12, ffn=3072, max_positions=512, batch=32, seq=(256, 384)),
}


def _hf_encoder(transformers, cfg: _Cfg, device, dtype):
    config = transformers.BertConfig(
        vocab_size=cfg.vocab,
        hidden_size=cfg.dim,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        intermediate_size=cfg.ffn,
        max_position_embeddings=cfg.max_positions,
        attn_implementation="sdpa",
    )
    model = freeze(transformers.BertModel(config, add_pooling_layer=False).to(device=device, dtype=dtype))

    def encode(input_ids, attention_mask):
        return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.zeros(1, 2, dtype=torch.int64, device=device)
    if tuple(encode(ids, torch.ones_like(ids)).shape) != (1, 2, cfg.dim):
        raise RuntimeError("unexpected BertModel output shape")
    return model, encode


@register
class BertEncoderWorkload(Workload):
    name = "bert_encoder"
    category = "nlp-encoder-dynamic-padding"
    phase = "infer"
    description = (
        "BERT encoder forward over a batch padded to its longest sequence, with an attention mask "
        "marking the padding (dynamic padding: the padded length changes from batch to batch). "
        "Tiny: 2 layers, hidden 32, batch 4 x 16 tokens. Full: BERT-base (12 x 768), batch 32 x "
        "256 tokens. transformers' BertModel (random weights). Dynamic: the sequence length."
    )
    dynamic_dims = (DynamicDim("input_ids", 1, "sequence"), DynamicDim("attention_mask", 1, "sequence"))
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        implementation, (model, fn) = library_model(
            "transformers", "transformers.BertModel", lambda transformers: _hf_encoder(transformers, cfg, device, dtype),
            device=device, seed=seed,
        )

        def make_inputs(variant: int):
            seq = variant_value(cfg.seq, variant, "sequence length")
            gen = input_generator(device, seed, variant)
            input_ids = randint(cfg.vocab, (cfg.batch, seq), gen, device)
            # Real lengths between seq/4 and seq; the first row is the longest (the batch is
            # padded to it), as a collator with dynamic padding produces.
            lengths = randint(seq + 1, (cfg.batch,), gen, device, low=max(2, seq // 4))
            lengths[0] = seq
            attention_mask = (torch.arange(seq, device=device)[None, :] < lengths[:, None]).to(torch.int64)
            input_ids = input_ids * attention_mask  # pad id 0
            return input_ids, attention_mask

        rtol, atol = tolerances(dtype, fp32=1e-3, bf16=0.2)
        return Instance(
            fn=fn,
            make_inputs=make_inputs,
            input_names=("input_ids", "attention_mask"),
            rtol=rtol,
            atol=atol,
            modules=(model,),
            implementation=implementation,
        )
