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


def _start_sleeper_then_sleep(*, own_session: bool) -> None:
    """Start a process that sleeps (in the case's group, or in a session of its own), then sleep."""
    import subprocess
    import sys

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=own_session)
    time.sleep(3600)


class SpawnsAndSleeps(_Fault):
    name = "fault_spawns_and_sleeps"
    description = "starts a process in its own group (as inductor starts compile workers), then sleeps"
    own_session = False

    def fn(self, x):
        _start_sleeper_then_sleep(own_session=self.own_session)
        return x


class EscapesAndSleeps(SpawnsAndSleeps):
    name = "fault_escapes_and_sleeps"
    description = "starts a process in a session of its own (out of reach of its group's kill), then sleeps"
    own_session = True


class SleepsInCompilePairs(_Fault):
    name = "fault_sleeps_in_compile_pairs"
    description = "passes as a case; in a compile pair's side (compile-once) starts a process, then sleeps"

    @staticmethod
    def fn(x):
        import sys

        if "compile-once" in sys.argv:
            _start_sleeper_then_sleep(own_session=False)
        return x * 2
