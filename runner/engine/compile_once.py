"""One cold compile, measured as work: the child side of a compile pair (``compile_pairs``).

``python -m runner compile-once --spec F --result R`` builds the case as the cold phase does (the
eager instance and its first call, whose inputs it keeps and whose model it frees, then instance B
with the same seed and marks, wrapped by ``torch.compile``), starts inductor's compile-worker pool
and waits until it answers (``PTBENCH_COMPILE_PREWARM=0`` leaves that to the compile, as a user's
cold start does), prints ``READY`` on stdout, waits for a line on stdin, and only then makes the
first compiled call: the compile. The parent can so start a build's compile and its reference's at
the same moment, and put both main threads on one core in between (``compile_pairs``).

Counted from the go line to the end of the first call: its wall time (``compile_time_s``), the CPU
time of this process, its threads and its compile workers (Linux's task clock through
``work_counter``, opened before torch starts any worker, so every worker inherits it; a pool started
before the go line has its start in the first reading, not in the difference; the pool is shut
down before the last reading), and of this process alone (``own_cpu_s``: the main thread's
tracing, lowering and code generation; the workers compile Triton kernels). Without the counter it
falls back to ``getrusage`` of the process and of its reaped children (the pool's start then counts).

No host-probe thread runs here (its CPU time would count as compile work).
"""
from __future__ import annotations

import dataclasses
import gc
import json
import os
import resource
import sys
import time
from pathlib import Path

READY = "ptbench-compile-ready"
PREWARM_ENV = "PTBENCH_COMPILE_PREWARM"  # "0": the pool starts inside the compile, as on a user's cold start
POOL_START_TIMEOUT_S = 120


def _rusage_cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _own_cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _start_compile_workers() -> bool:
    """Start inductor's compile-worker pool and wait until it runs a job: its start (a fresh
    interpreter and N forked workers) is then not part of the compile's count. False where this
    torch has no such pool, does not use one (one compile thread) or moved its API."""
    try:
        from torch._inductor.async_compile import AsyncCompile, maybe_warm_pool

        maybe_warm_pool()
        deadline = time.monotonic() + POOL_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if AsyncCompile.use_process_pool():  # submits a no-op job once; True once it has run
                return True
            if getattr(AsyncCompile, "_ready_future", None) is None:
                return False  # no pool here: nothing to start
            time.sleep(0.05)
    except (ImportError, AttributeError):  # moved in this torch: the pool starts inside the compile
        return False
    return False


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
    start: dict = {}

    def ready_then_go() -> None:  # instance B built and wrapped: only the compile (its first call) is left
        start["pool_prestarted"] = os.environ.get(PREWARM_ENV, "1") != "0" and _start_compile_workers()
        gc.collect()
        if spec.device == "cuda":
            torch.cuda.empty_cache()
        print(READY, flush=True)
        go.readline()
        start.update(task_clock=counter.read()["task_clock_s"], rusage=_rusage_cpu_s(), own=_own_cpu_s())

    compiled = CompiledSide(workload, spec, inputs, probe, before_first_call=ready_then_go)
    own_cpu_s = _own_cpu_s() - start["own"]
    main_cpus = len(os.sched_getaffinity(0))  # this (main) thread's CPUs: 1 when it shared a core with the other side
    _shutdown_compile_workers()
    after, rusage_after = counter.read()["task_clock_s"], _rusage_cpu_s()
    if start["task_clock"] is not None and after is not None:
        cpu_s, source = after - start["task_clock"], "task_clock"
    else:
        cpu_s, source = rusage_after - start["rusage"], "rusage"
    result = {"wall_s": compiled.compile_time_s, "cpu_s": cpu_s, "own_cpu_s": own_cpu_s, "cpu_source": source,
              "main_cpus": main_cpus, "pool_prestarted": start["pool_prestarted"], "torch": torch.__version__}
    result_path.write_text(json.dumps(result))
    return result
