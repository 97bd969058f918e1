"""Distributed test workloads (``tests.runner.distributed_workloads:Class``): a tiny two-block model
whose training step runs under DDP, one that is wrong only when compiled, one whose rank 1 never
joins the compiled side. Each sets ``distributed`` itself, as a ``@train+ddp`` name does."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch import nn

from workloads.base import Distributed, DynamicDim, Instance, Workload

SLEEPER = "import time; time.sleep(3600)"


class TwoBlocks(nn.Module):
    def __init__(self, wrong_when_compiled: bool):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))
        self.wrong_when_compiled = wrong_when_compiled

    def forward(self, x, y=None):
        for block in self.blocks:
            x = torch.relu(block(x))
        if self.wrong_when_compiled and torch.compiler.is_compiling():
            x = x * 1.01  # the planted perturbation: only the compiled side's gradients carry it
        return x


class _Distributed(Workload):
    category = "test-distributed"
    phase = "train"
    dynamic_dims = (DynamicDim("x", 0), DynamicDim("y", 0))
    distributed = Distributed(parallel="ddp")
    wrong_when_compiled = False
    builds = 0

    def build(self, *, size, device, dtype, seed=0):
        type(self).builds += 1
        self.before_build()
        torch.manual_seed(seed)
        model = TwoBlocks(self.wrong_when_compiled).to(device, dtype)

        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(variant)
            rows = 4 + 4 * variant
            return torch.randn(rows, 8, generator=generator).to(device, dtype), torch.randn(rows, 8, generator=generator).to(device, dtype)

        def loss(output, kwargs):
            return F.mse_loss(output, kwargs["y"])

        def step(x, y):
            value = loss(model(x), {"y": y})
            value.backward()
            return value.detach()

        return Instance(fn=step, make_inputs=make_inputs, input_names=("x", "y"), modules=(model,), loss=loss)

    def before_build(self) -> None:
        pass


class Ddp(_Distributed):
    name = "dist_test_ddp"
    description = "two linear blocks, a DDP training step"


class FsdpCompileFirstCheckpoint(_Distributed):
    name = "dist_test_fsdp_compile_first_checkpoint"
    description = "two linear blocks, FSDP2, compiled then wrapped, blocks checkpointed"
    distributed = Distributed(parallel="fsdp", compile_first=True, checkpoint=True)


class WrongGradientsWhenCompiled(_Distributed):
    name = "dist_test_wrong_when_compiled"
    description = "scales its output by 1.01 when traced: the compiled step's gradients differ from eager DDP's"
    wrong_when_compiled = True


class RankOneNeverJoins(_Distributed):
    name = "dist_test_rank_one_never_joins"
    description = "rank 1 starts a sleeper and waits for it when building its compiled side: rank 0's collective hangs"

    def before_build(self) -> None:
        import torch.distributed as dist

        if type(self).builds == 2 and dist.is_initialized() and dist.get_rank() == 1:
            subprocess.run([sys.executable, "-c", SLEEPER])


class RankOneSegfaults(_Distributed):
    name = "dist_test_rank_one_segfaults"
    description = "rank 1 dies by SIGSEGV when building its compiled side: rank 0's collective breaks"

    def before_build(self) -> None:
        import torch.distributed as dist

        if type(self).builds == 2 and dist.is_initialized() and dist.get_rank() == 1:
            os.kill(os.getpid(), signal.SIGSEGV)
