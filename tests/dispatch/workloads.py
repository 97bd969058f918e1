"""A workload for the dispatch tests: slow enough to kill its worker in the middle of the case."""
from __future__ import annotations

import time

import torch

from workloads.base import Instance, Workload


class SlowPass(Workload):
    """Passes after sleeping 3 s while it builds (each phase builds twice: eager and compiled)."""

    name = "test_slow_pass"
    category = "test"
    phase = "infer"
    description = "sleeps while building, then a tiny matmul (dispatch tests)"
    dynamic_dims = ()
    dtypes = ("float32",)

    def build(self, *, size, device, dtype, seed=0):
        time.sleep(3)
        torch.manual_seed(seed)
        weight = torch.randn(8, 8, dtype=dtype, device=device)

        def make_inputs(variant: int):
            return (torch.randn(4, 8, generator=torch.Generator().manual_seed(variant)).to(device, dtype),)

        def fn(x):
            return x @ weight

        return Instance(fn=fn, make_inputs=make_inputs, input_names=("x",))
