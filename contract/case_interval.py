"""The interval a case reports (issue #44 item 6): the wider of its own and its series' run to run.

A case's own 95 % interval (``speedup_noise``) comes from the pairs timed within its run: one compile,
timed many times. Its run-to-run spread is larger, because each run compiles again and a cold compile
picks its own launch configurations (docs/measuring.md, "How precise a case is"): on one H200,
timm:resnet50 read ±0.06 to ±0.70 % within each run against a 2.3 % run-to-run sd over six runs of one
build. What a case reports is therefore the wider of

- its own half-width (``WITHIN_RUN``), and
- where another run of its build falls 95 % of the time: ``Z_95`` x the run-to-run sd of its series'
  repeated runs (``RUN_TO_RUN``), or, for a series without repeated runs, of its class (``CLASS``:
  the upper quartile over the class's series that have them, as detection's class prior),

labelled with the one it is. Pure Python: no Django, no torch.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from contract.comparison import repeat_sd
from contract.findings import Z_95

WITHIN_RUN, RUN_TO_RUN, CLASS = "within run", "run to run", "class run to run"


@dataclass(frozen=True)
class CaseInterval:
    halfwidth: float | None  # relative 95 % half-width reported (±h)
    source: str  # WITHIN_RUN, RUN_TO_RUN or CLASS: which of the two is wider
    own: float | None  # the case's own (within-run) half-width
    sd: float | None  # the run-to-run sd (of the log) it was set against, None where none is known


def halfwidth_of_sd(sd: float) -> float:
    """A relative run-to-run sd (of the log) as the relative 95 % half-width of one run: ``expm1(Z_95 sd)``
    (the inverse of ``contract.findings.sd_of_halfwidth``)."""
    return math.expm1(Z_95 * sd)


def case_interval(own: float | None, sd: float | None, *, from_class: bool = False) -> CaseInterval:
    """The reported interval of one case: its own half-width ``own`` or ``halfwidth_of_sd(sd)``,
    whichever is wider (``sd``: its series' run-to-run sd, or its class's with ``from_class``)."""
    own = own if own is not None and math.isfinite(own) and own >= 0 else None
    if sd is None or not math.isfinite(sd) or sd <= 0:
        return CaseInterval(own, WITHIN_RUN, own, None)
    between = halfwidth_of_sd(sd)
    if own is not None and own >= between:
        return CaseInterval(own, WITHIN_RUN, own, sd)
    return CaseInterval(between, CLASS if from_class else RUN_TO_RUN, own, sd)


def series_sds(values: Iterable[tuple[object, object, float | None]]) -> dict[object, float]:
    """Per series, the run-to-run sd of its repeated runs (``repeat_sd``: runs of one build around their
    own mean, pooled over builds) from ``(series, build, value)`` rows; series without a repeated run
    are left out."""
    groups: dict[object, dict[object, list[float]]] = {}
    for series, build, value in values:
        if value is not None and value > 0:
            groups.setdefault(series, {}).setdefault(build, []).append(float(value))
    sds = {series: repeat_sd(builds.values()) for series, builds in groups.items()}
    return {series: sd for series, sd in sds.items() if sd is not None}


def class_sd(sds: Mapping[object, float]) -> float | None:
    """The class's run-to-run sd for a series without repeated runs: the upper quartile of its
    series' (``numpy.percentile(sds, 75)``, as ``detection.replicates.class_prior``); None where none
    has repeated runs."""
    ordered = sorted(sd for sd in sds.values() if math.isfinite(sd))
    if not ordered:
        return None
    at = 0.75 * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
