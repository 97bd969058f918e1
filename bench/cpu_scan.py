"""Is some CPU always at full speed? The host's speed, CPU by CPU, over time.

Sweeps every CPU this process may use, again and again for ``--seconds``: on each, the engine's
host probe (a fixed piece of pure-Python work, runner.engine.timing.host_probe_ms), best of two,
with the thread pinned there. Prints per CPU how often it ran within 15% of the fastest probe seen
(the host's full speed) and, per sweep, how many CPUs did: if every sweep has one, a timing loop
that follows the fastest CPU (:class:`FastCpuSeeker`, timing_jitter.py's ``seek`` segment) always
runs at full speed. On the lent H100 it does not: its CPUs slow down together.
Also prints the CPU topology the VM shows. No torch needed:

    python -m bench.cpu_scan --seconds 60 --out /tmp/scan.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from runner.engine.timing import host_probe_ms

SLOWER_THAN_FLOOR = 1.15  # move when the current CPU's probe is this much slower than the fastest seen


def process_threads() -> list[int]:
    """Thread ids of this process (Linux)."""
    return [int(task.name) for task in Path("/proc/self/task").iterdir()]


def pin_process(cpus: set[int]) -> None:
    """Every thread of this process onto ``cpus``; threads that ended meanwhile are skipped."""
    for tid in process_threads():
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            pass


class FastCpuSeeker:
    """Finds the fastest allowed CPU by timing ``probe`` on each, and keeps the process there
    (bench/timing_jitter.py's ``seek`` segment: it did not help on the lent H100, whose CPUs slow
    down together; see bench/results/README.md).

    ``floor_ms`` is the fastest probe seen on any CPU so far: the host's full speed. :meth:`settle`
    (before each timed pair) re-probes the current CPU and scans again only when it has fallen more
    than ``tolerance`` behind the floor, so a quiet machine pays one probe per pair.
    """

    def __init__(self, probe: Callable[[], float], *, tolerance: float = SLOWER_THAN_FLOOR,
                 cpus: set[int] | None = None, probes_per_cpu: int = 2):
        self.probe = probe
        self.tolerance = tolerance
        self.allowed = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
        self.probes_per_cpu = probes_per_cpu
        self.floor_ms = math.inf
        self.cpu: int | None = None
        self.scans = 0
        self.moves = 0

    def scan(self) -> dict[int, float]:
        """Probe every allowed CPU (this thread visits each), then pin the process to the fastest."""
        speeds: dict[int, float] = {}
        for cpu in self.allowed:
            os.sched_setaffinity(0, {cpu})
            speeds[cpu] = min(self.probe() for _ in range(self.probes_per_cpu))
        best = min(speeds, key=speeds.__getitem__)
        self.floor_ms = min(self.floor_ms, speeds[best])
        if self.cpu is not None and best != self.cpu:
            self.moves += 1
        self.cpu = best
        self.scans += 1
        pin_process({best})
        return speeds

    def settle(self) -> float:
        """The probe on the CPU the next pair will run on, after moving there if need be."""
        if self.cpu is None:
            return self.scan()[self.cpu]
        probe_ms = self.probe()
        self.floor_ms = min(self.floor_ms, probe_ms)
        if probe_ms <= self.tolerance * self.floor_ms:
            return probe_ms
        return self.scan()[self.cpu]

    def release(self) -> None:
        """Give the process back every CPU it was allowed."""
        pin_process(set(self.allowed))

    def summary(self) -> dict:
        return {"cpus": len(self.allowed), "scans": self.scans, "moves": self.moves,
                "floor_ms": round(self.floor_ms, 4) if math.isfinite(self.floor_ms) else None}


def topology(cpus: list[int]) -> dict:
    """Model name and, per CPU, its SMT siblings and core/package ids as the VM presents them."""
    def read(path: str) -> str | None:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return None

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), None)
    per_cpu = {cpu: {"siblings": read(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"),
                     "core": read(f"/sys/devices/system/cpu/cpu{cpu}/topology/core_id"),
                     "package": read(f"/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"),
                     "governor": read(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")}
               for cpu in cpus}
    return {"model": model, "cpus": per_cpu}


def sweep_for(seconds: float) -> list[dict]:
    seeker = FastCpuSeeker(host_probe_ms)
    sweeps = []
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < seconds:
            at = time.perf_counter() - started
            sweeps.append({"t": round(at, 3), "ms": {cpu: round(ms, 4) for cpu, ms in seeker.scan().items()}})
    finally:
        seeker.release()
    return sweeps


def summarise(sweeps: list[dict]) -> dict:
    floor = min(min(s["ms"].values()) for s in sweeps)
    fast = SLOWER_THAN_FLOOR * floor
    cpus = sorted(sweeps[0]["ms"])
    fast_per_sweep = [sum(ms <= fast for ms in s["ms"].values()) for s in sweeps]
    best_per_sweep = [min(s["ms"].values()) for s in sweeps]
    return {
        "floor_ms": round(floor, 4),
        "sweeps": len(sweeps),
        "sweeps_with_a_fast_cpu": sum(n > 0 for n in fast_per_sweep),
        "fast_cpus_per_sweep_median": statistics.median(fast_per_sweep),
        "best_per_sweep_ms": {"median": round(statistics.median(best_per_sweep), 4), "max": round(max(best_per_sweep), 4)},
        "fast_share_per_cpu": {cpu: round(sum(s["ms"][cpu] <= fast for s in sweeps) / len(sweeps), 3) for cpu in cpus},
        "median_ms_per_cpu": {cpu: round(statistics.median(s["ms"][cpu] for s in sweeps), 4) for cpu in cpus},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    sweeps = sweep_for(args.seconds)
    report = {"topology": topology(cpus), "summary": summarise(sweeps), "sweeps": sweeps}
    summary = report["summary"]
    print(f"model {report['topology']['model']}  cpus {len(cpus)}  siblings of cpu{cpus[0]}: "
          f"{report['topology']['cpus'][cpus[0]]['siblings']}")
    print(f"floor {summary['floor_ms']} ms; {summary['sweeps_with_a_fast_cpu']}/{summary['sweeps']} sweeps had a CPU "
          f"within {SLOWER_THAN_FLOOR:.2f}x of it (median {summary['fast_cpus_per_sweep_median']} CPUs); "
          f"best per sweep median {summary['best_per_sweep_ms']['median']} max {summary['best_per_sweep_ms']['max']} ms")
    print("cpu  fast-share  median-ms")
    for cpu in cpus:
        print(f"{cpu:3d}  {summary['fast_share_per_cpu'][cpu]:10.3f}  {summary['median_ms_per_cpu'][cpu]:9.4f}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
