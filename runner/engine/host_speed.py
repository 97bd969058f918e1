"""How fast the host ran while something took place: a sidecar process times the host probe.

A cold compile is host work (Python in dynamo and inductor, LLVM and ptxas for Triton) of a few
to tens of seconds. On the lent GPU VMs the host's speed changes by up to 2x for seconds to minutes,
all CPUs together (bench/cpu_scan.py), so a compile's wall time follows the host as much as the
build. ``HostSpeedSampler`` starts a small pure-Python process that times ``host_probe_ms``'s fixed
piece of work every ``interval_s`` for as long as the block runs, on another CPU; the median of its
samples says how fast the host was during exactly that block, and the process's CPU seconds
(itself and the children it waited for) say how much of the block was its own work.
"""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

# The same fixed work as runner.engine.timing.host_probe_ms (kept in one string: the sidecar
# imports nothing of ours, so it starts in ~20 ms).
_SIDECAR = """
import sys, time
interval = float(sys.argv[1])
while True:
    started = time.perf_counter()
    total = 0
    for i in range(20_000):
        total += i * i
    sys.stdout.write(f"{(time.perf_counter() - started) * 1e3:.4f}\\n")
    sys.stdout.flush()
    time.sleep(interval)
"""


def reserve_probe_cpu() -> int | None:
    """Keep this process (and the compile workers it starts later) off one CPU, on which the
    sidecar then runs alone: otherwise the compile's own workers slow the sidecar down and it
    reports contention instead of the host's speed. Returns that CPU, or None where the process
    may use fewer than 4 CPUs (nothing to spare) or affinity is not supported."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(allowed) < 4:
        return None
    probe_cpu = allowed[-1]
    os.sched_setaffinity(0, set(allowed[:-1]))
    os.environ["PTBENCH_PROBE_CPU"] = str(probe_cpu)
    return probe_cpu


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class HostSpeed:
    probe_ms: list[float]
    cpu_s: float
    wall_s: float
    probe_cpu: int | None = None  # the CPU the sidecar had to itself (reserve_probe_cpu), if any

    def as_environment(self) -> dict:
        summary = {"cpu_s": round(self.cpu_s, 3), "wall_s": round(self.wall_s, 3), "probe_samples": len(self.probe_ms),
                   "probe_cpu": self.probe_cpu}
        if self.probe_ms:
            summary["host_probe_ms"] = {"min": round(min(self.probe_ms), 4), "median": round(statistics.median(self.probe_ms), 4)}
        return summary


class HostSpeedSampler:
    """``with HostSpeedSampler() as sampler: ...`` then ``sampler.result``; never fails the block."""

    def __init__(self, interval_s: float = 0.02):
        self.interval_s = interval_s
        self.result: HostSpeed | None = None

    def __enter__(self) -> "HostSpeedSampler":
        probe_cpu = os.environ.get("PTBENCH_PROBE_CPU")
        pin = (lambda: os.sched_setaffinity(0, {int(probe_cpu)})) if probe_cpu else None
        self.probe_cpu = int(probe_cpu) if probe_cpu else None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-S", "-c", _SIDECAR, str(self.interval_s)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                preexec_fn=pin,
            )
        except OSError:
            self._process = None
        self._cpu = _cpu_seconds()
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        wall = time.perf_counter() - self._started
        cpu = _cpu_seconds() - self._cpu
        samples: list[float] = []
        if self._process is not None:
            self._process.kill()
            output, _ = self._process.communicate()  # reaped after ``cpu`` was read: not counted
            for line in output.splitlines():
                try:
                    samples.append(float(line))
                except ValueError:
                    pass
            samples = samples[1:]  # the first one pays the sidecar's own start
        self.result = HostSpeed(probe_ms=samples, cpu_s=cpu, wall_s=wall, probe_cpu=self.probe_cpu)
