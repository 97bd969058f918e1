"""A workload whose generated code a fusion setting changes (issue #30: "what changed" on CPU).
Loaded as ``tests.runner.explain_workloads:PointwiseChain``."""
from __future__ import annotations

import torch

from workloads.base import Instance, Workload


class PointwiseChain(Workload):
    """Pointwise ops that Inductor writes as one C++ kernel; ``inductor.cpp.simdlen=1`` (no vector
    ISA) writes the same kernel, under the same name, as scalar loops (docs/explain.md). (On CPU,
    torch 2.13, ``inductor.max_fusion_size=1`` leaves this code as it is: the ops are one node.)"""

    name = "test_pointwise_chain"
    category = "test"
    phase = "infer"
    description = "pointwise chain, one fused kernel (runner tests)"
    dtypes = ("float32",)

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(5 + variant)
            return (torch.randn(256 if variant == 0 else 512, generator=generator).to(device, dtype),)

        return Instance(fn=pointwise_chain, make_inputs=make_inputs, input_names=("x",))


def pointwise_chain(x):
    first = x.sin() * 2  # an output: its own buffer, which Inductor fuses with the consumer's loop
    return first, ((first + 1).relu().cos() - x).exp()
