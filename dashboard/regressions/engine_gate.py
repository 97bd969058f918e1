"""The change-point engine's alerts held until their newest build is run again (issue #42).

The engine (``detection.detect``) alerts on a change seen on two or more builds with one run each; an
evening on a busy machine (an outlier burst of 2-4 builds) passes its bar as readily as a step does.
So an engine alert stands only where the newest build it was raised on (``raised_at``) has a second
run that is off the same way too: the median of that build's runs after its first at least
``run_min`` (the two-build rule's per-run criterion, ``detection.FastConfig``) x the engine's noise
from the alert's before level, and nearer its after level than its before one (``NEARER`` of the
shift: a 1-sd bar alone passes 16 % of re-runs of an unchanged build). Where the build has one run, the alert is a suspect: the newest build
is re-measured (``services.remeasure``) and the pass after the re-run stores it or drops it; where
nobody re-ran it, the next build with a value decides by the same criterion. Measured on
bench/recall_benchmark.py's ``gated`` rule (docs/detection.md). Pure reads: no query of its own.
"""
from __future__ import annotations

import math
import statistics

from detection import ChangePoint, FastConfig

from dashboard.regressions.history import Point
from dashboard.regressions.two_build import build_runs

RULE = "engine_gate"  # ``suspect["rule"]`` of its re-measurements and ``details["rule"]`` of its findings
CONFIRMED, REJECTED, PENDING = "confirmed", "rejected", "pending"
NEARER = 0.5  # of the alert's shift (bench/recall_benchmark.py's --gate-nearer)


def off_same_way(value: float, *, before: float, after: float, noise: float, z: float, direction: str) -> bool:
    """Whether ``value`` is off ``before`` the alert's way (``z``, signed like the alert's magnitude:
    negative is worse) by at least ``run_min`` x ``noise`` (relative) and ``NEARER`` of the way to ``after``."""
    if not value or not before or value <= 0 or before <= 0:
        return False
    goodness = (1.0 if direction == "higher_is_better" else -1.0) * math.log(value / before)
    shift = abs(math.log(after / before)) if after and after > 0 else 0.0
    return math.copysign(1.0, z) * goodness >= max(FastConfig().run_min * noise, NEARER * shift)


def gate_state(runs: list[list[float]], *, raised_at: int, before: float, after: float, noise: float, z: float,
               direction: str) -> tuple[str, str | None]:
    """``(state, how)`` of an engine alert raised at ``runs[raised_at]`` (per build, its runs' values):
    confirmed / rejected by the build's re-runs (``how`` "remeasurement") or, with one run there, by
    the next build with a value (``how`` "next_build"); pending while neither exists. An alert
    without a noise or a before level to judge by stands as the engine raised it."""
    if not noise or not before:
        return CONFIRMED, None
    again = runs[raised_at][1:] if raised_at < len(runs) else []
    if again:
        ok = off_same_way(statistics.median(again), before=before, after=after, noise=noise, z=z, direction=direction)
        return (CONFIRMED if ok else REJECTED), "remeasurement"
    later = next((build for build in runs[raised_at + 1:] if build), None)
    if later is None:
        return PENDING, None
    ok = off_same_way(statistics.median(later), before=before, after=after, noise=noise, z=z, direction=direction)
    return (CONFIRMED if ok else REJECTED), "next_build"


def gate(points: list[Point], metric: str, direction: str, cp: ChangePoint) -> tuple[str, str | None]:
    """``gate_state`` of the engine's alert ``cp`` over the series' stored points."""
    return gate_state(build_runs(points, metric), raised_at=cp.raised_at, before=cp.before, after=cp.after, noise=cp.noise, z=cp.z,
                      direction=direction)


def gate_note(how: str | None) -> str:
    """What a finding's message says of the gate: ``" (its newest build re-measured)"``."""
    return {"remeasurement": " (its newest build re-measured)", "next_build": " (confirmed by the next build)"}.get(how or "", "")
