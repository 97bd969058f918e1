"""Workloads that fail in one specific, real way each; the runner's tests check the status it gives.

Loaded by name in the case subprocess as ``tests.runner.fault_workloads:Class``.
"""
from __future__ import annotations

import os
import signal
import time

import torch

from workloads.base import DynamicDim, Instance, Workload


class _Fault(Workload):
    category = "test-fault"
    phase = "infer"
    dynamic_dims = (DynamicDim("x", 0),)

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(variant)
            return (torch.randn(4 + 4 * variant, 3, generator=generator).to(device, dtype),)

        return Instance(fn=self.fn, make_inputs=make_inputs, input_names=("x",))

    @staticmethod
    def fn(x):
        return x * 2


class Passes(_Fault):
    name = "fault_none"
    description = "no fault: passes"


class EagerError(_Fault):
    name = "fault_eager_error"
    description = "the eager function raises"

    @staticmethod
    def fn(x):
        raise ValueError("eager run refuses this input")


@torch.library.custom_op("ptbench_test::doubled", mutates_args=())
def doubled(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@doubled.register_fake
def _doubled_shape(x):
    raise RuntimeError("doubled has no shape rule under compile")


class CompileOnlyError(_Fault):
    name = "fault_compile_error"
    description = "an op that runs eagerly but whose fake (compile-time) kernel raises"

    @staticmethod
    def fn(x):
        return doubled(x)


class WrongWhenCompiled(_Fault):
    name = "fault_wrong_when_compiled"
    description = "returns a different value when compiled"
    dtypes = ("float32", "bfloat16", "float64")

    @staticmethod
    def fn(x):
        if torch.compiler.is_compiling():
            return x * 2 + 0.5
        return x * 2


class Sleeps(_Fault):
    name = "fault_sleeps"
    description = "sleeps far past any time limit"

    @staticmethod
    def fn(x):
        time.sleep(3600)
        return x


class KilledBySignal(_Fault):
    name = "fault_killed_by_signal"
    description = "the process kills itself with SIGKILL"

    @staticmethod
    def fn(x):
        os.kill(os.getpid(), signal.SIGKILL)
        return x


class OutOfMemory(_Fault):
    name = "fault_out_of_memory"
    description = "asks the allocator for far more memory than any machine has"

    @staticmethod
    def fn(x):
        # 2**62 bytes: the allocator refuses at once (no memory is touched).
        return torch.empty(2**60, dtype=torch.float32, device=x.device)
