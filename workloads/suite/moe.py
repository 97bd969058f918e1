"""``moe_routing``: a Mixtral-style mixture-of-experts layer with data-dependent token routing.

Why it is in the suite: MoE layers gather, for each expert, the tokens the router sent to it
(``torch.where(mask)`` -> ``nonzero``), so intermediate sizes depend on the data, not on the input
shapes. That is where unbacked symbols arise (with ``capture_dynamic_output_shape_ops``) or, with
stock settings, where Dynamo graph-breaks; both are what the product measures.

The router runs in float32 (as production MoEs do) so compiled and eager pick the same experts;
each expert's tokens are scattered back with ``index_add_`` one expert at a time (indices are unique
within an expert, so the result is deterministic on GPU too).

``fn(hidden [B, T, dim]) -> hidden [B, T, dim]`` (pre-RMSNorm MoE feed-forward with a residual).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from workloads.base import DynamicDim, Workload
from workloads.registry import register
from workloads.suite._common import frozen_model, model_instance, input_generator, pick, randn, variant_value
from workloads.suite.layers import RMSNorm, SwiGLU


@dataclass(frozen=True)
class _Cfg:
    dim: int
    ffn: int
    experts: int
    top_k: int
    batch: int
    seq: tuple[int, int]  # variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(dim=32, ffn=64, experts=4, top_k=2, batch=2, seq=(16, 24)),
    # One Mixtral-8x7B MoE layer (hidden 4096, 8 experts of FFN 14336, top-2) over 4 x 512 tokens.
    "full": _Cfg(dim=4096, ffn=14_336, experts=8, top_k=2, batch=4, seq=(512, 384)),
}


class MoELayer(nn.Module):
    """RMSNorm -> top-k softmax router (float32) -> per-expert SwiGLU on its tokens -> residual."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.top_k = cfg.top_k
        self.norm = RMSNorm(cfg.dim)  # fed float32, so it normalises in float32 whatever the dtype
        self.router = nn.Linear(cfg.dim, cfg.experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(cfg.dim, cfg.ffn) for _ in range(cfg.experts))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        dim = hidden.shape[-1]
        normed = self.norm(hidden.float()).reshape(-1, dim)  # float32 throughout the routing
        logits = normed @ self.router.weight.float().t()
        tokens = normed.to(hidden.dtype)
        weights, chosen = torch.topk(logits.softmax(dim=-1), self.top_k, dim=-1)  # [N, k]
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(tokens.dtype)

        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            token_idx, slot = torch.where(chosen == e)  # data-dependent number of tokens
            y = expert(tokens[token_idx]) * weights[token_idx, slot, None]
            out.index_add_(0, token_idx, y)
        return hidden + out.view_as(hidden)


@register
class MoERouting(Workload):
    name = "moe_routing"
    category = "moe-data-dependent"
    phase = "infer"
    description = (
        "Mixtral-style mixture-of-experts feed-forward: float32 top-2 router, then for each expert "
        "the tokens routed to it are gathered with torch.where (a data-dependent size: unbacked "
        "symbols, or graph breaks under stock settings), run through its SwiGLU and scattered back "
        "with index_add_. Tiny: 4 experts, hidden 32, 2 x 16 tokens. Full: one Mixtral-8x7B layer "
        "(8 experts, hidden 4096, FFN 14336) over 4 x 512 tokens. Dynamic: the sequence length."
    )
    dynamic_dims = (DynamicDim("hidden", 1, "sequence"),)
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        model = frozen_model(lambda: MoELayer(cfg), device=device, dtype=dtype, seed=seed)

        def make_inputs(variant: int):
            seq = variant_value(cfg.seq, variant, "sequence length")
            gen = input_generator(device, seed, variant)
            return (randn((cfg.batch, seq, cfg.dim), gen, device, dtype),)

        return model_instance(model, make_inputs, ("hidden",), dtype=dtype, fp32=1e-3, bf16=6e-2)
