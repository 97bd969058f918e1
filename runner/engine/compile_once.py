"""One cold compile, measured as work: the child side of a compile pair (``compile_pairs``).

``python -m runner compile-once --spec F --result R`` builds the case as the cold phase does (the
eager instance and its first call, which it then frees, then instance B with the same seed and
marks), prints
``READY`` on stdout, waits for a line on stdin, and only then compiles and times the first
compiled call, so that the parent can start a build's compile and its reference's at the same
moment. Besides the wall time it records the CPU time of the whole compile: this process, its
threads and the compile-worker pool it starts (Linux's task clock through ``work_counter``,
opened before torch starts any worker; the pool is shut down before the read so that its
workers' time joins ours). Without the counter it falls back to ``getrusage`` of the process
and of its reaped children.

No host-probe thread runs here (its CPU time would count as compile work).
"""
from __future__ import annotations

import dataclasses
import gc
import json
import resource
import sys
from pathlib import Path

READY = "ptbench-compile-ready"


def _rusage_cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _shutdown_compile_workers() -> None:
    try:
        from torch._inductor.async_compile import shutdown_compile_workers
    except ImportError:  # moved or absent: a pool that outlives the read is not counted
        return
    shutdown_compile_workers()


def compile_once(spec_path: Path, result_path: Path, go=sys.stdin) -> dict:
    from runner.engine.work_counter import WorkCounter

    counter = WorkCounter()  # before torch: the compile workers it starts inherit the counter
    from contract.spec import CaseSpec

    spec = CaseSpec.read(spec_path)
    spec = dataclasses.replace(spec, timing=dataclasses.replace(spec.timing_budget, host_probe=False))
    if spec.config_overrides:  # a build variant's compile; a reference's spec carries none
        from runner.engine.overrides import apply_config

        apply_config(spec.config_overrides)
    import torch

    from runner.engine.case import CompiledSide, EagerSide
    from runner.engine.memory import MemoryProbe
    from workloads.registry import get_workload

    workload = get_workload(spec.workload, allow_import=spec.import_allowed)
    probe = MemoryProbe(spec.device)
    eager = EagerSide(workload, spec, probe)
    inputs = eager.pristine_inputs
    del eager  # only its inputs are needed: two copies of a model per process would not fit four processes on one GPU
    gc.collect()
    if spec.device == "cuda":
        torch.cuda.empty_cache()
    print(READY, flush=True)
    go.readline()
    before, rusage_before = counter.read()["task_clock_s"], _rusage_cpu_s()
    compiled = CompiledSide(workload, spec, inputs, probe)
    _shutdown_compile_workers()
    after, rusage_after = counter.read()["task_clock_s"], _rusage_cpu_s()
    if before is not None and after is not None:
        cpu_s, source = after - before, "task_clock"
    else:
        cpu_s, source = rusage_after - rusage_before, "rusage"
    result = {"wall_s": compiled.compile_time_s, "cpu_s": cpu_s, "cpu_source": source, "torch": torch.__version__}
    result_path.write_text(json.dumps(result))
    return result
