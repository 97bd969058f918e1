"""``bert_encoder``: a BERT-base encoder forward over a dynamically padded batch.

Why it is in the suite: encoder inference/fine-tuning with *dynamic padding* (each batch padded to
its longest sequence) is the commonest source of recompiles for NLP users: the sequence length
changes every batch. The attention mask marks the padding; the sequence length is dynamic.

``fn(input_ids [B, T], attention_mask [B, T]) -> last hidden state [B, T, hidden]``. Uses
transformers' ``BertModel`` from a ``BertConfig`` (random weights, SDPA attention) when installed,
else our own post-LayerNorm encoder with the same structure.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import DynamicDim, Instance, Workload
from workloads.registry import register
from workloads.suite._common import (
    freeze,
    input_generator,
    pick,
    randint,
    tolerances,
    transformers_or_own,
    variant_value,
)
from workloads.suite.layers import GeluMLP


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


class EncoderLayer(nn.Module):
    """Post-LayerNorm BERT layer: self-attention with an additive padding mask, then GELU FFN."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.ln1 = nn.LayerNorm(cfg.dim, eps=1e-12)
        self.mlp = GeluMLP(cfg.dim, cfg.ffn)
        self.ln2 = nn.LayerNorm(cfg.dim, eps=1e-12)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=additive_mask)
        x = self.ln1(x + self.out(y.transpose(1, 2).reshape(b, t, c)))
        return self.ln2(x + self.mlp(x))


class BertEncoder(nn.Module):
    """Word + position + token-type embeddings, LayerNorm, then post-LN encoder layers."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.word = nn.Embedding(cfg.vocab, cfg.dim)
        self.position = nn.Embedding(cfg.max_positions, cfg.dim)
        self.token_type = nn.Embedding(2, cfg.dim)
        self.ln = nn.LayerNorm(cfg.dim, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        t = input_ids.shape[1]
        positions = torch.arange(t, device=input_ids.device)
        x = self.word(input_ids) + self.position(positions)[None] + self.token_type.weight[0]
        x = self.ln(x)
        # [B, T] 1/0 -> additive [B, 1, 1, T]: 0 for tokens, a large negative value for padding.
        keep = attention_mask[:, None, None, :].to(x.dtype)
        additive_mask = (1.0 - keep) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, additive_mask)
        return x


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


def _own_encoder(cfg: _Cfg, device, dtype):
    model = freeze(BertEncoder(cfg).to(device=device, dtype=dtype))
    return model, model


@register
class BertEncoderWorkload(Workload):
    name = "bert_encoder"
    category = "nlp-encoder-dynamic-padding"
    phase = "infer"
    description = (
        "BERT encoder forward over a batch padded to its longest sequence, with an attention mask "
        "marking the padding (dynamic padding: the padded length changes from batch to batch). "
        "Tiny: 2 layers, hidden 32, batch 4 x 16 tokens. Full: BERT-base (12 x 768), batch 32 x "
        "256 tokens. transformers' BertModel when installed, else our own encoder. Dynamic: the "
        "sequence length."
    )
    dynamic_dims = (DynamicDim("input_ids", 1), DynamicDim("attention_mask", 1))
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        implementation, (model, fn) = transformers_or_own(
            "transformers.BertModel",
            lambda transformers: _hf_encoder(transformers, cfg, device, dtype),
            "workloads.suite.bert.BertEncoder",
            lambda: _own_encoder(cfg, device, dtype),
            device=device,
            seed=seed,
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
