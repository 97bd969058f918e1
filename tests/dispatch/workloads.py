"""Workloads for the dispatch tests: slow enough to kill its worker in the middle of the case, and
one that a variant's environment slows (bisection)."""
from __future__ import annotations

import os
import time

import torch

from workloads.base import DynamicDim, Instance, Workload


def _tiny_matmul(*, device, dtype, seed, pause_s: float = 0.0) -> Instance:
    """x @ w on a 4x8 input, sleeping ``pause_s`` in each call."""
    torch.manual_seed(seed)
    weight = torch.randn(8, 8, dtype=dtype, device=device)

    def make_inputs(variant: int):
        return (torch.randn(4, 8, generator=torch.Generator().manual_seed(variant)).to(device, dtype),)

    def fn(x):
        if pause_s:
            time.sleep(pause_s)
        return x @ weight

    return Instance(fn=fn, make_inputs=make_inputs, input_names=("x",))


class SlowPass(Workload):
    """Passes after sleeping 3 s while it builds (each phase builds twice: eager and compiled); a
    worker whose environment sets ``PTBENCH_TEST_SLOW_BUILD_S`` sleeps that long instead (its case
    processes inherit it)."""

    name = "test_slow_pass"
    category = "test"
    phase = "infer"
    description = "sleeps while building, then a tiny matmul (dispatch tests)"
    dynamic_dims = ()
    dtypes = ("float32",)

    def build(self, *, size, device, dtype, seed=0):
        time.sleep(float(os.environ.get("PTBENCH_TEST_SLOW_BUILD_S", "3")))
        return _tiny_matmul(device=device, dtype=dtype, seed=seed)


class EnvSlowed(Workload):
    """A tiny matmul that a build variant's environment slows (bisection tests, issue #31): each call
    sleeps 2 ms when ``TORCH_PTBENCH_TEST_STEP`` is 3 or more (a chain of variants numbered 1..6: the
    planted change is in the third) or when ``TORCH_PTBENCH_TEST_C`` is 1 (one of five overrides)."""

    name = "test_env_slowed"
    category = "test"
    phase = "infer"
    description = "a tiny matmul, 2 ms slower per call under some environment overrides (bisection tests)"
    dynamic_dims = ()
    dtypes = ("float32",)

    def build(self, *, size, device, dtype, seed=0):
        slow = int(os.environ.get("TORCH_PTBENCH_TEST_STEP", "0")) >= 3 or os.environ.get("TORCH_PTBENCH_TEST_C") == "1"
        return _tiny_matmul(device=device, dtype=dtype, seed=seed, pause_s=0.002 if slow else 0.0)


class SlowBuildSlowCalls(Workload):
    """Several at once on one worker (issue #44): builds for 2 s (so that cases started together
    overlap), then a tiny matmul that sleeps 1 ms per call (so that its timing holds the device's
    lock for a while); one dynamic dimension, so static, backed and unbacked are three cases."""

    name = "test_slow_build_slow_calls"
    category = "test"
    phase = "infer"
    description = "sleeps 2 s while building, then a tiny matmul sleeping 1 ms per call (concurrency tests)"
    dynamic_dims = (DynamicDim("x", 0),)
    dtypes = ("float32",)

    def build(self, *, size, device, dtype, seed=0):
        time.sleep(2.0)
        instance = _tiny_matmul(device=device, dtype=dtype, seed=seed, pause_s=0.001)
        return Instance(fn=instance.fn, make_inputs=lambda variant: (torch.randn(4 + 4 * variant, 8).to(device, dtype),),
                        input_names=("x",))
