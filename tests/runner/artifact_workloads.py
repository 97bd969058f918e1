"""A workload for the artifact tests: it writes a file where its case process runs, as
``torch_compile_debug/`` or a profiler would (loaded as ``tests.runner.artifact_workloads:Class``)."""
from __future__ import annotations

from pathlib import Path

import torch

from workloads.base import Instance, Workload


class WritesWhereItRuns(Workload):
    name = "test_writes_where_it_runs"
    category = "test"
    phase = "infer"
    description = "writes a file into its working directory, then adds (artifact tests)"
    dynamic_dims = ()

    def build(self, *, size, device, dtype, seed=0):
        Path("written-by-the-case.txt").write_text("a case's working directory is its own\n")

        def make_inputs(variant: int):
            return (torch.ones(4 + variant, device=device, dtype=dtype),)

        def fn(x):
            return x * 2 + 1

        return Instance(fn=fn, make_inputs=make_inputs, input_names=("x",), implementation="tests.runner.artifact_workloads")
