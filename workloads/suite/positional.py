"""``positional_graph_break``: a transformer whose learned positional lookup forces a graph break.

Why it is in the suite: a common way to lose most of torch.compile's speedup is a tensor turned into
a Python number in the middle of the model. Here a streaming encoder reads the chunk's start offset
with ``position_offset.item()`` and slices its learned position table with the resulting Python int,
the way many hand-written models do. With stock settings (``capture_scalar_outputs=False``) Dynamo
breaks the graph exactly once per call, at that ``.item()`` (which is also a device sync): one graph
for the token embedding, one for the rest. The embeddings cross the break as an input of the second
graph, so how the dynamic sequence length survives the break is part of what is measured. The
slice length is read from those embeddings, not from ``input_ids``: reading the marked input after
the break specialised it and raised a ConstraintViolationError under ``mark_dynamic`` (torch 2.13).

``fn(input_ids [B, T], position_offset [] int64) -> hidden states [B, T, hidden]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from workloads.base import DynamicDim, Workload
from workloads.registry import register
from workloads.suite._common import frozen_model, model_instance, input_generator, pick, randint, variant_value
from workloads.suite.layers import PreNormBlock


@dataclass(frozen=True)
class _Cfg:
    vocab: int
    dim: int
    layers: int
    heads: int
    max_positions: int
    offset: int  # the chunk's first position (same for both variants)
    batch: int
    seq: tuple[int, int]  # variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(vocab=128, dim=32, layers=2, heads=2, max_positions=64, offset=8, batch=2, seq=(16, 24)),
    # BERT-base-sized encoder (12 x 768), batch 32 x 256 tokens starting at position 64.
    "full": _Cfg(vocab=30_522, dim=768, layers=12, heads=12, max_positions=1024, offset=64, batch=32, seq=(256, 384)),
}


class StreamingEncoder(nn.Module):
    """Token embedding + learned absolute positions read at a runtime offset, pre-LN blocks."""

    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.tokens = nn.Embedding(cfg.vocab, cfg.dim)
        self.positions = nn.Embedding(cfg.max_positions, cfg.dim)
        self.blocks = nn.ModuleList(PreNormBlock(cfg.dim, cfg.heads, causal=False) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.dim)

    def forward(self, input_ids: torch.Tensor, position_offset: torch.Tensor) -> torch.Tensor:
        x = self.tokens(input_ids)
        start = int(position_offset.item())  # the graph break: tensor -> Python int
        x = x + self.positions.weight[start : start + x.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.ln(x)


@register
class PositionalGraphBreak(Workload):
    name = "positional_graph_break"
    category = "graph-break"
    phase = "infer"
    description = (
        "Pre-LN transformer encoder over a chunk of a stream: the learned position table is sliced "
        "at an offset read with .item(), which breaks the graph exactly once per call (token "
        "embedding | rest of the model). Tiny: 2 layers, hidden 32, 2 x 16 tokens. Full: 12 x 768, "
        "batch 32 x 256 tokens. Dynamic: the sequence length."
    )
    dynamic_dims = (DynamicDim("input_ids", 1, "sequence"),)
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        model = frozen_model(lambda: StreamingEncoder(cfg), device=device, dtype=dtype, seed=seed)

        def make_inputs(variant: int):
            seq = variant_value(cfg.seq, variant, "sequence length")
            gen = input_generator(device, seed, variant)
            input_ids = randint(cfg.vocab, (cfg.batch, seq), gen, device)
            position_offset = torch.tensor(cfg.offset, dtype=torch.int64, device=device)
            return input_ids, position_offset

        return model_instance(model, make_inputs, ("input_ids", "position_offset"), dtype=dtype, fp32=1e-3, bf16=0.2)
