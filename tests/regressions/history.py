"""Build histories with planted changes, stored through the real ingest service (detection is
called explicitly in tests, or through on-commit callbacks where the test says so)."""
from __future__ import annotations

import random

from dashboard.results.models import Run
from tests.dashboard.page_history import ingest_build
from tests.documents import host_environment, make_result

NOISE = 0.004  # relative sd of build-to-build noise in these histories


def case(speedup: float, *, workload: str = "mlp_loop", regime: str = "static", rng: random.Random, **overrides) -> dict:
    """One passing case whose per-block samples agree with ``speedup`` (within-run noise 0.2%)."""
    eager = [2.5 * (1 + rng.gauss(0, 0.002)) for _ in range(12)]
    compiled = [e / speedup * (1 + rng.gauss(0, 0.002)) for e in eager]
    result = make_result(workload, regime, speedup=speedup, eager_latency_ms=2.5, compiled_latency_ms=2.5 / speedup, **overrides)
    result["samples"] = {"eager_ms": eager, "compiled_ms": compiled, "calls_per_block": 10}
    return result


def speedup_history(levels: list[float], *, seed: int = 7, regimes=("static",), day0: int = 1, **overrides) -> list[Run]:
    """One build per level (day0, day0+1, ...), each with a case per regime at that level plus noise."""
    rng = random.Random(seed)
    runs = []
    for i, level in enumerate(levels):
        results = [case(level * (1 + rng.gauss(0, NOISE)), regime=r, rng=rng, **overrides) for r in regimes]
        document = ingest_build(day0 + i, results)
        runs.append(Run.objects.get(pk=document["run"]["id"]))
    return runs


def host_history(levels_and_probes: list[tuple[float, float]], *, share: float) -> list:
    """One build per (speedup, host probe ms): a GPU-like case whose compiled side has host share ``share``."""
    rng = random.Random(5)
    runs = []
    for day, (level, probe_ms) in enumerate(levels_and_probes, start=1):
        result = case(level * (1 + rng.gauss(0, NOISE)), rng=rng)
        result["environment"] = host_environment(share, probe_ms)
        runs.append(ingest_build(day, [result]))
    return [Run.objects.get(pk=d["run"]["id"]) for d in runs]
