"""Why is one case's speedup different from one process to the next? Call-level timing diagnostics.

Builds one case the way the case subprocess does (runner.engine.case: instance A eager, instance B
compiled on the same inputs), then times single calls of each side, alternating, several ways:

- ``as_is``: per call the host time until the call returns (enqueue), the device time between two
  CUDA events around it, and the host time until the end event completes; Python GC pauses during
  the loop are recorded through ``gc.callbacks``.
- ``k3-a`` (``kN-anything``): blocks of N back-to-back calls, as the runner times calls longer
  than its target block.
- ``seek``: ``cpu_scan.FastCpuSeeker`` before each pair (the whole process on the fastest CPU,
  moved when its CPU slows down).
- ``gc_frozen``: the same after ``gc.collect(); gc.freeze(); gc.disable()``.
- ``profile``: kernel time per call from ``torch.profiler`` (the sum of device self time), so that
  device-event time minus kernel time is the time the GPU waited for the host.
- ``engine`` / ``engine_seek``: the runner's own ``measure_interleaved`` + ``bootstrap_speedup`` as
  a case reports it, without and with the seeker as its host probe.

Run it in several processes (fresh or shared ``TORCHINDUCTOR_CACHE_DIR``) to tell a per-process
kernel choice from host jitter:

    python -m bench.timing_jitter --workload resnet_train --out /tmp/a.json
"""
from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Self

import torch
from bench.cpu_scan import FastCpuSeeker, pin_process

from runner.engine.case import CompiledSide, EagerSide
from runner.engine.memory import MemoryProbe
from contract.spec import CaseSpec, TimingBudget
from runner.engine.stats import bootstrap_speedup, speedup_ratio
from runner.engine.timing import host_probe_ms, measure_interleaved


class GcPauses:
    """Durations of the collections that ran while active, per generation."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started: float | None = None

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.pauses.append((info["generation"], (time.perf_counter() - self._started) * 1e3))
            self._started = None

    def __enter__(self) -> Self:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)

    def summary(self) -> dict:
        by_generation: dict[str, list[float]] = {}
        for generation, ms in self.pauses:
            by_generation.setdefault(str(generation), []).append(ms)
        return {g: {"count": len(v), "total_ms": round(sum(v), 2), "max_ms": round(max(v), 2)} for g, v in by_generation.items()}


def describe(values: list[float]) -> dict:
    ordered = sorted(values)
    n = len(ordered)
    return {
        "n": n,
        "median": round(statistics.median(ordered), 3),
        "p10": round(ordered[n // 10], 3),
        "p90": round(ordered[(9 * n) // 10], 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
    }


def current_cpu() -> int:
    """The CPU this thread last ran on (field 39 of /proc/thread-self/stat)."""
    fields = Path("/proc/thread-self/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[36])


def cpu_jiffies() -> dict:
    """Whole-machine CPU time so far (/proc/stat first line): busy, idle, steal."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = values[:8]
    return {"busy": user + nice + system + irq + softirq, "idle": idle + iowait, "steal": steal}


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's child processes that are still alive."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def time_calls(calls: dict, pairs: int, per_block: int = 1, before_pair=host_probe_ms) -> dict:
    """Alternating blocks of ``per_block`` back-to-back calls; per side the enqueue, device and
    completed times per call (ms), and per pair the host probe (``before_pair`` returns it) and the
    CPU the thread ran on."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = {side: {"enqueue_ms": [], "device_ms": [], "completed_ms": []} for side in calls}
    probes, cpus = [], []
    machine_before, children_before = cpu_jiffies(), children_cpu_s()
    with GcPauses() as pauses:
        for _ in range(pairs):
            probes.append(before_pair())
            cpus.append(current_cpu())
            for side, call in calls.items():
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                start.record()
                for _ in range(per_block):
                    call()
                t1 = time.perf_counter()
                end.record()
                end.synchronize()
                t2 = time.perf_counter()
                times[side]["enqueue_ms"].append((t1 - t0) * 1e3 / per_block)
                times[side]["device_ms"].append(start.elapsed_time(end) / per_block)
                times[side]["completed_ms"].append((t2 - t0) * 1e3 / per_block)
    machine_after = cpu_jiffies()
    summary = {side: {kind: describe(v) for kind, v in kinds.items()} for side, kinds in times.items()}
    summary["ratio_of_pairs"] = round(speedup_ratio(times["eager"]["device_ms"], times["compiled"]["device_ms"]), 4)
    summary["gc_pauses"] = pauses.summary()
    summary["probe_ms"] = describe(probes)
    summary["cpus"] = sorted(set(cpus))
    summary["machine_jiffies"] = {k: machine_after[k] - machine_before[k] for k in machine_after}
    summary["children_cpu_s"] = round(children_cpu_s() - children_before, 3)
    summary["raw"] = {
        "probe_ms": [round(v, 4) for v in probes],
        "cpu": cpus,
        **{f"{side}_{kind}": [round(v, 3) for v in values] for side, kinds in times.items() for kind, values in kinds.items()},
    }
    return summary


def kernel_time_per_call(call, calls: int) -> dict:
    """Kernel time per call (device events only: a CPU op's self device time counts its kernels
    again), and the synchronising host calls seen."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    kernel_us, kernels, syncs = 0.0, 0, 0
    for avg in prof.key_averages():
        if avg.device_type == DeviceType.CUDA:
            total = getattr(avg, "self_device_time_total", None)
            kernel_us += total if total is not None else getattr(avg, "self_cuda_time_total", 0.0)
            kernels += avg.count
        elif avg.key in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"):
            syncs += avg.count
    return {"kernel_ms_per_call": round(kernel_us / 1e3 / calls, 3), "kernels_per_call": kernels / calls,
            "host_syncs_per_call": syncs / calls}


def sync_warnings(call) -> int:
    """Synchronising CUDA calls one call makes (torch.cuda.set_sync_debug_mode)."""
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
            torch.cuda.synchronize()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return len(caught)


def line(name: str, part: dict) -> str:
    e, c = part["eager"], part["compiled"]
    return (f"{name:10s} eager dev {e['device_ms']['median']:7.2f} [{e['device_ms']['p10']:.2f}-{e['device_ms']['p90']:.2f}] "
            f"enq {e['enqueue_ms']['median']:6.2f} | compiled dev {c['device_ms']['median']:7.2f} "
            f"[{c['device_ms']['p10']:.2f}-{c['device_ms']['p90']:.2f}] enq {c['enqueue_ms']['median']:6.2f} "
            f"| ratio {part['ratio_of_pairs']:.4f} probe {part['probe_ms']['median']:.3f} [{part['probe_ms']['p10']:.3f}-{part['probe_ms']['p90']:.3f}] "
            f"cpus {part['cpus']} children {part['children_cpu_s']} s machine {part['machine_jiffies']} gc {part['gc_pauses']} "
            f"{part.get('setup') or ''}")


class Segment:
    """How one segment sets the host up: ``before_pair`` returns the host probe before each pair,
    ``undo`` restores the host, ``notes`` go into the report."""

    def __init__(self, undo=lambda: None, before_pair=host_probe_ms, notes=None):
        self.undo, self.before_pair, self.notes = undo, before_pair, notes or (dict)


def enter_segment(segment: str) -> Segment:
    """Set the host up for one segment."""
    if segment == "seek":  # the whole process on the fastest CPU, moved when it slows down
        seeker = FastCpuSeeker(host_probe_ms)
        return Segment(seeker.release, seeker.settle, seeker.summary)
    return Segment(undo=_enter_plain_segment(segment))


def _enter_plain_segment(segment: str):
    """Set the host up for one segment; returns what undoes it."""
    if segment == "as_is" or segment.startswith("k"):
        return lambda: None
    if segment == "gc_frozen":
        gc.collect()
        gc.freeze()
        gc.disable()

        def undo() -> None:
            gc.enable()
            gc.unfreeze()
        return undo
    if segment == "no_workers":
        from torch._inductor import async_compile

        shutdown = getattr(async_compile, "shutdown_compile_workers", None)
        if shutdown is not None:
            shutdown()
        return lambda: None
    if segment == "pinned":  # every thread (the autograd engine runs backward on its own) on one CPU
        allowed = os.sched_getaffinity(0)
        pin_process({current_cpu()})
        return lambda: pin_process(allowed)
    raise SystemExit(f"unknown segment {segment!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="resnet_train")
    parser.add_argument("--regime", default="static")
    parser.add_argument("--mode", default="default")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--size", default="full")
    parser.add_argument("--pairs", type=int, default=150)
    parser.add_argument("--segments", default="as_is,no_workers,pinned,gc_frozen")
    parser.add_argument("--engine-budget-s", type=float, default=10.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    spec = CaseSpec(args.workload, args.mode, args.regime, args.dtype, "cuda", size=args.size)
    from workloads.registry import get_workload

    report: dict = {"argv": sys.argv[1:], "cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
                    "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    probe = MemoryProbe("cuda")
    workload = get_workload(spec.workload, allow_import=True)
    eager = EagerSide(workload, spec, probe)
    compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe)
    report["compile_s"] = round(compiled.compile_time_s, 2)
    calls = {"eager": functools.partial(eager.fn, *eager.inputs), "compiled": functools.partial(compiled.fn, *compiled.inputs)}
    for _ in range(20):
        for call in calls.values():
            call()
    torch.cuda.synchronize()

    report["sync_calls"] = {side: sync_warnings(call) for side, call in calls.items()}
    report["segments"] = {}
    for segment in args.segments.split(","):
        setup = enter_segment(segment)
        try:
            per_block = int(segment.split("-")[0][1:]) if segment.startswith("k") else 1
            report["segments"][segment] = time_calls(calls, args.pairs, per_block, setup.before_pair)
            report["segments"][segment]["setup"] = setup.notes()
        finally:
            setup.undo()
        print(line(segment, report["segments"][segment]), flush=True)
    for name, seek in (("engine", False), ("engine_seek", True)):
        budget = TimingBudget(budget_s=args.engine_budget_s, target_block_s=0.025, warmup_s=0.5, host_probe=True)
        seeker = FastCpuSeeker(host_probe_ms) if seek else None
        try:
            samples = measure_interleaved(calls["eager"], calls["compiled"], device="cuda", budget=budget,
                                          probe=seeker.settle if seeker else None)
        finally:
            if seeker:
                seeker.release()
        estimate = bootstrap_speedup(samples.eager_ms, samples.compiled_ms, seed=0)
        report[name] = {"speedup": round(estimate.speedup, 4), "noise": round(estimate.noise, 4),
                        "eager_median_ms": round(statistics.median(samples.eager_ms), 3),
                        "compiled_median_ms": round(statistics.median(samples.compiled_ms), 3),
                        "pairs": len(samples.eager_ms), "calls_per_block": samples.calls_per_block,
                        "host_share": samples.host_share, "host_cpu": seeker.summary() if seeker else {},
                        "probe_median_ms": round(statistics.median(samples.host_probe_ms), 3)}
        print(f"{name:11s} {report[name]}", flush=True)
    report["profile"] = {side: kernel_time_per_call(call, 10) for side, call in calls.items()}
    last = calls["compiled"]()
    report["compiled_output_finite"] = bool(all(torch.isfinite(t).all() for t in last if isinstance(t, torch.Tensor)))
    Path(args.out).write_text(json.dumps(report, indent=1))

    print(f"compile {report['compile_s']} s  syncs/call {report['sync_calls']}  profile {report['profile']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
