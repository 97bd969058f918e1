"""What a finding carries to explain itself, whichever rule stored it (detection's own pass or a
re-measurement's decision): a compile total's phases (``{"phases": [...]}``) and the likeliest
cause (``{"cause": ...}``, dashboard/regressions/explain.py; docs/explain.md)."""
from __future__ import annotations

from contract.metrics import BY_NAME, EXPLAINED_BY
from dashboard.regressions.explain import finding_cause
from dashboard.regressions.history import Point


def phase_details(points: list[Point], metric: str, *, last_good: int | None, first_bad: int, raised: int) -> dict:
    """``{"phases": [...]}`` of a total's finding (contract.metrics.EXPLAINED_BY: a compile's phases):
    each phase at the last good build and over the bad builds (median), largest change in seconds
    first, so the finding says where its time went; {} for a metric without phases or none measured.
    ``last_good``, ``first_bad`` and ``raised`` index ``points``."""
    if last_good is None or metric not in EXPLAINED_BY:
        return {}
    bad = points[first_bad : raised + 1]
    phases = []
    for phase in EXPLAINED_BY[metric]:
        before = points[last_good].values.get(phase)
        after = [p.values[phase] for p in bad if p.values.get(phase) is not None]
        if before is not None and after:
            after_value = sorted(after)[len(after) // 2]
            phases.append({"metric": phase, "label": BY_NAME[phase].line_label, "before": before, "after": after_value,
                           "change_s": after_value - before})
    phases.sort(key=lambda p: -abs(p["change_s"]))
    return {"phases": phases} if phases else {}


def finding_explanation(*, series_id: int, metric: str, points: list[Point], last_good_id: int | None,
                        first_bad_id: int, raised_id: int) -> dict:
    """The phases and the likeliest cause of a regression first bad at build ``first_bad_id`` (last
    good ``last_good_id``, raised at ``raised_id``), over the series' ``points`` in build order: the
    details a finding stored by a re-measurement carries as one stored by detection does."""
    ids = [p.build_id for p in points]
    details = {}
    if last_good_id in ids and first_bad_id in ids:
        raised = ids.index(raised_id) if raised_id in ids else len(points) - 1
        details.update(phase_details(points, metric, last_good=ids.index(last_good_id), first_bad=ids.index(first_bad_id),
                                     raised=raised))
    cause = finding_cause(series_id=series_id, metric=metric, last_good_id=last_good_id, first_bad_id=first_bad_id)
    return {**details, **({"cause": cause} if cause else {})}
