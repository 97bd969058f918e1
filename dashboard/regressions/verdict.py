"""The verdict against a named baseline: the two builds' cases compared directly, case by case.

Deterministic findings come from ``compare_cases``; a noisy metric counts as regressed when the
combined runs of both builds say so (``confirm_with_remeasurement``, with the series' own
build-to-build noise) and the change is at least ``MIN_CHANGE``. Points in between are not needed,
so any two builds can be compared (a release against the previous release, a PR against main).
"""
from __future__ import annotations

import math

from dashboard.detection import between_build_noise, compare_cases, confirm_with_remeasurement
from dashboard.regressions.history import TRACKED_METRICS, series_points
from dashboard.results.models import Build, Series

MIN_CHANGE = 0.03  # a change smaller than 3% never fails a build on its own


def verdict_against(*, build: Build, baseline: Build, machine_class: str) -> list[dict]:
    common = Series.objects.filter(machine_class=machine_class, results__build=build).filter(
        results__build=baseline).select_related("workload", "config").distinct()
    found: list[dict] = []
    for series in common:
        points = {p.build_id: p for p in series_points(series_id=series.id)}
        old, new = points[baseline.id], points[build.id]
        head = {"workload": series.workload.name, "config": str(series.config), "machine_class": machine_class}
        for finding in compare_cases(old.case, new.case):
            if finding.regression:
                found.append({**head, "metric": "status", "finding": finding.kind, "kind": "regression",
                              "before": None, "after": None, "magnitude": None, "confidence": 1.0,
                              "message": finding.message, "reasons": list(finding.reasons)})
        ordered = list(points.values())
        for metric, direction in TRACKED_METRICS.items():
            old_runs = old.samples.get(metric) or [[v] for v in old.run_values.get(metric, [])]
            new_runs = new.samples.get(metric) or [[v] for v in new.run_values.get(metric, [])]
            if not old_runs or not new_runs:
                continue
            history = [p.values.get(metric) for p in ordered[: ordered.index(old) + 1]]
            noise = between_build_noise(history)
            noise = noise if math.isfinite(noise) else None
            decision = confirm_with_remeasurement(old_runs, new_runs, direction, between_run_sigma=noise, history=history)
            if decision.decision == "regression" and -decision.magnitude >= MIN_CHANGE:
                found.append({**head, "metric": metric, "finding": "change_point", "kind": "regression",
                              "before": decision.before, "after": decision.after, "magnitude": decision.magnitude,
                              "confidence": decision.confidence,
                              "message": f"{metric} {decision.before:.4g} -> {decision.after:.4g} "
                                         f"({decision.relative_change:+.1%}, z {decision.z:.1f})"})
    return found
