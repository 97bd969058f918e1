"""``mlp_loop``: a small residual MLP applied many times in a Python loop: compile is expected to lose.

Why it is in the suite: the control case. Each step is two tiny matmuls and two pointwise ops, so
the time goes to launching kernels and to host overhead, not to arithmetic. Inductor has little to
fuse (each pointwise op already sits between two matmuls), while the compiled function adds guard
checks and its own wrapper; on a GPU, default-mode compile is expected to be no faster or slower
than eager (reduce-overhead's CUDA graphs are the mode that can win). The graph has no breaks:
Dynamo unrolls the loop.

``fn(x [B, width]) -> [B, width]``; the weights of ``blocks`` are reused ``repeats`` times, like an
iterative solver or an RNN cell.
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
    width: int
    blocks: int
    repeats: int
    batch: tuple[int, int]  # variant 0 (timed), variant 1


_SIZES = {
    "tiny": _Cfg(width=32, blocks=2, repeats=4, batch=(8, 12)),
    # 4 blocks x 32 repeats = 128 steps of 2 matmuls (256 x 256) on 64 rows: a few ms of launches.
    "full": _Cfg(width=256, blocks=4, repeats=32, batch=(64, 48)),
}


class ResidualStep(nn.Module):
    """x + fc2(tanh(fc1(x))): four kernels in eager (addmm, tanh, addmm, add)."""

    def __init__(self, width: int):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.tanh(self.fc1(x)))


class MLPLoop(nn.Module):
    def __init__(self, cfg: _Cfg):
        super().__init__()
        self.repeats = cfg.repeats
        self.blocks = nn.ModuleList(ResidualStep(cfg.width) for _ in range(cfg.blocks))
        scale = (cfg.blocks * cfg.repeats) ** -0.5  # keep the residual stream O(1) over all steps
        with torch.no_grad():
            for block in self.blocks:
                block.fc2.weight.mul_(scale)
                block.fc2.bias.mul_(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.repeats):
            for block in self.blocks:
                x = block(x)
        return x


@register
class MLPLoopWorkload(Workload):
    name = "mlp_loop"
    category = "overhead-bound"
    phase = "infer"
    description = (
        "A residual MLP step (x + fc2(tanh(fc1(x)))) applied many times in a Python loop: tiny "
        "matmuls, launch/host-overhead bound, nothing for the compiler to fuse; the case where "
        "compile is expected to lose (no graph breaks). Tiny: width 32, 8 steps, batch 8. Full: "
        "width 256, 128 steps, batch 64. Dynamic: the batch."
    )
    dynamic_dims = (DynamicDim("x", 0, "batch"),)
    dtypes = ("float32", "bfloat16", "float16")

    def build(self, *, size, device, dtype, seed=0):
        cfg = pick(size, _SIZES)
        model = frozen_model(lambda: MLPLoop(cfg), device=device, dtype=dtype, seed=seed)

        def make_inputs(variant: int):
            batch = variant_value(cfg.batch, variant, "batch")
            gen = input_generator(device, seed, variant)
            return (randn((batch, cfg.width), gen, device, dtype),)

        return model_instance(model, make_inputs, ("x",), dtype=dtype, fp32=1e-3, bf16=3e-2)
