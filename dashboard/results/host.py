"""The host CPU behind a GPU result: is the case host-bound, and was the host slowed while it ran?

The runner records with every GPU result (``environment.timing``) the compiled side's host share
(time to enqueue a block over its device time: ~1 means the GPU waited for Python) and a host probe
(a fixed piece of pure-Python work timed before each pair; its median says how fast the host was).
A host-bound case's speedup and compiled latency follow the host's speed: the lent H100 VM ran at
half speed on all 16 CPUs together for minutes, and an H200 VM whose probe read 1.17 ms (0.87-1.01
ms on another) measured resnet_train at 1.17 instead of 1.48-1.57 (bench/cpu_scan.py,
bench/results/hostcpu/, bench/results/README.md). Run page, workload charts, detection and the CI
verdict all read these through this module.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence

from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from contract import facts
from contract.metrics import HOST_SENSITIVE, HOST_WORK

# Read from a result without loading its environment document.
HOST_PROBE_MS = Cast(KT(facts.lookup(facts.HOST_PROBE_MEDIAN)), FloatField())
COMPILED_HOST_SHARE = Cast(KT(facts.lookup(facts.COMPILED_HOST_SHARE)), FloatField())

HOST_BOUND_SHARE = 0.9  # a compiled host share from which the case is host-bound
# Metrics that follow the host's speed in a host-bound case (contract.metrics ``host_sensitive``).
HOST_SENSITIVE_METRICS = HOST_SENSITIVE
# Metrics that are host work in every case (a compile is Python, LLVM and ptxas on the host;
# contract.metrics ``host_work``): they follow the host's speed whatever the compiled step's host
# share. On the lent H100 VM, runs of one unchanged build compiled bert_encoder in 10-12 s while the
# host probe read 0.9-1.1 ms and in 15-16 s while it read 1.2-1.9 ms, three runs in a row
# (bench/results/history).
HOST_WORK_METRICS = HOST_WORK
# New runs' median probe over the reference's from which the host counts as slowed. Small, because
# a case at the edge of host-bound amplifies it (the H200 example above: 18-20% slower host, 25%
# lower speedup).
HOST_SLOWED = 1.15
HOST_REFERENCE_RUNS = 10  # builds before a point whose probes make its reference
# The run page marks a host-bound case whose host ran below this share of the speed of its series'
# fastest run (``host_speed``).
HOST_SPEED_MARK_BELOW = 0.8


def is_host_bound(compiled_host_share: float | None) -> bool:
    return compiled_host_share is not None and compiled_host_share >= HOST_BOUND_SHARE


def slowdown(reference_ms: Sequence[float | None], new_ms: Sequence[float | None]) -> dict | None:
    """Median probe of the new runs over the reference runs' (``slowdown``, with both medians), or
    None without probes on either side."""
    reference = [v for v in reference_ms if v]
    new = [v for v in new_ms if v]
    if not reference or not new:
        return None
    before, after = statistics.median(reference), statistics.median(new)
    return {"slowdown": round(after / before, 3), "before_probe_ms": round(before, 4), "after_probe_ms": round(after, 4)}


def slowed(reference_ms: Sequence[float | None], new_ms: Sequence[float | None]) -> dict | None:
    """``slowdown`` where it reaches ``HOST_SLOWED``, else None."""
    found = slowdown(reference_ms, new_ms)
    return found if found and found["slowdown"] >= HOST_SLOWED else None


def host_speed(floor_ms: float | None, probe_ms: float | None) -> float | None:
    """The host's speed while a result was timed, as a share of the fastest run's (1.0 at most)."""
    return min(1.0, floor_ms / probe_ms) if floor_ms and probe_ms else None


def slowed_points(probes: Sequence[float | None], shares: Sequence[float | None]) -> dict[int, dict]:
    """Per point of a series (oldest first): the host-bound points whose probe was ``HOST_SLOWED``
    slower than the median of the ``HOST_REFERENCE_RUNS`` points before them, with their
    ``slowdown``. Only earlier points are read, so a point's flag never changes as the series grows."""
    found = {}
    for i, (probe, share) in enumerate(zip(probes, shares)):
        if not is_host_bound(share):
            continue
        found_here = slowed(probes[max(0, i - HOST_REFERENCE_RUNS) : i], [probe])
        if found_here:
            found[i] = found_here
    return found
