"""Where a case's wall time went (``cost``, keys from contract.phases.COST_STEPS; docs/explain.md).

The case process stamps the seconds since it began when each step finished (``phase_end_s``,
runner.engine.result_file); a step's cost is the difference to the step before it. The interleaved
timing is split between its sides by their timed samples (blocks x calls per block x per-call ms),
its warm-up and bookkeeping in proportion. The compile pairs and the warm process are the parent's
wall times.
"""
from __future__ import annotations

import time

# The case process's steps in the order it stamps them: (stamp, cost step).
_STAMPS = (("eager", "build"), ("compile", "compile"), ("accuracy", "accuracy"), ("timing", "timing"),
           ("memory", "memory"), ("recompiles", "recompiles"), ("profile", "profile"), ("done", "explain"))


def case_cost(record: dict, *, compile_pairs_s: float | None = None, warm_s: float | None = None) -> dict[str, float]:
    ends = (record.get("environment") or {}).get("phase_end_s") or {}
    cost: dict[str, float] = {}
    previous = 0.0
    for stamp, step in _STAMPS:
        if stamp not in ends:
            continue
        cost[step] = round(max(0.0, ends[stamp] - previous), 3)
        previous = ends[stamp]
    if "timing" in cost:
        timing = cost.pop("timing")
        samples = record.get("samples") or {}
        eager, compiled = sum(samples.get("eager_ms") or []), sum(samples.get("compiled_ms") or [])
        share = eager / (eager + compiled) if eager + compiled > 0 else 0.5
        cost["eager_timing"] = round(timing * share, 3)
        cost["compiled_timing"] = round(timing - cost["eager_timing"], 3)
    if compile_pairs_s is not None:
        cost["compile_pairs"] = round(compile_pairs_s, 3)
    if warm_s is not None:
        cost["warm"] = round(warm_s, 3)
    return cost


class Laps:
    """The seconds between marks inside one step: ``mark("build")`` records the time since the
    previous mark (or since the ``Laps`` began) under "build"."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._last, 3)
        self._last = now
