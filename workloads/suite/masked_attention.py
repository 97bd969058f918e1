"""``masked_attention``: attention with an irregular (sliding-window + global tokens) mask.

Why it is in the suite: irregular attention patterns (Longformer/BigBird-style local windows with
a few global tokens, block-sparse masks) have no ready-made fused kernel. Users write them as a
plain masked softmax and rely on torch.compile, often with ``mode="max-autotune"``, to fuse the
mask, the softmax and the matmuls; this is the workload where autotuning should show up.

The mask is computed from the sequence length with ``arange`` comparisons (no data dependence), and
applied through an explicit ``masked_fill`` + softmax (not a fused SDPA call), so the compiler sees
the whole pattern. ``fn(x [B, T, dim]) -> [B, T, dim]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from workloads.base import DynamicDim, Workload
from workloads.registry import register
from workloads.suite._common import frozen_model, model_instance, input_generator, pick, randn, variant_value


@dataclass(frozen=True)
class _Cfg:
    dim: int
    heads: int
    layers: int
    window: int  # each token sees +-window neighbours
    global_tokens: int  # the first tokens see and are seen by everyone
    batch: int
    seq: tuple[int, int]  # variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(dim=32, heads=2, layers=1, window=4, global_tokens=2, batch=2, seq=(32, 40)),
    # 2 layers of hidden 1024 / 16 heads over 8 x 2048 tokens, window +-128, 16 global tokens.
    "full": _Cfg(dim=1024, heads=16, layers=2, window=128, global_tokens=16, batch=8, seq=(2048, 1536)),
}


def local_global_mask(seq_len: int, window: int, global_tokens: int, device) -> torch.Tensor:
    """[T, T] bool, True where attention is allowed: |i - j| <= window, or i or j is global."""
    pos = torch.arange(seq_len, device=device)
    i, j = pos[:, None], pos[None, :]
    return ((i - j).abs() <= window) | (i < global_tokens) | (j < global_tokens)


class MaskedAttentionBlock(nn.Module):
    """Pre-LN attention block whose softmax is masked explicitly (matmul, masked_fill, softmax, matmul)."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.heads = cfg.heads
        self.ln = nn.LayerNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        head_dim = c // self.heads
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * head_dim**-0.5
        scores = scores.masked_fill(~allowed, float("-inf"))
        probs = scores.float().softmax(dim=-1).to(v.dtype)  # every row has its diagonal: no NaN
        y = (probs @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.proj(y)


class MaskedAttentionStack(nn.Module):
    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.cfg = cfg
        self.blocks = nn.ModuleList(MaskedAttentionBlock(cfg) for _ in range(cfg.layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        allowed = local_global_mask(x.shape[1], self.cfg.window, self.cfg.global_tokens, x.device)
        for block in self.blocks:
            x = block(x, allowed)
        return x


@register
class MaskedAttention(Workload):
    name = "masked_attention"
    category = "masked-attention"
    phase = "infer"
    description = (
        "Pre-LN attention blocks with a sliding-window (+-window) plus global-token mask applied "
        "through an explicit masked_fill + softmax: an irregular pattern with no stock fused kernel, "
        "a candidate for max-autotune. Tiny: 1 layer, hidden 32, 2 x 32 tokens, window 4. Full: 2 "
        "layers, hidden 1024 / 16 heads, 8 x 2048 tokens, window 128, 16 global tokens. Dynamic: "
        "the sequence length."
    )
    dynamic_dims = (DynamicDim("x", 1, "sequence"),)
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        model = frozen_model(lambda: MaskedAttentionStack(cfg), device=device, dtype=dtype, seed=seed)

        def make_inputs(variant: int):
            seq = variant_value(cfg.seq, variant, "sequence length")
            gen = input_generator(device, seed, variant)
            return (randn((cfg.batch, seq, cfg.dim), gen, device, dtype),)

        return model_instance(model, make_inputs, ("x",), dtype=dtype, fp32=1e-3, bf16=6e-2)
