"""Regressions stored out of build order, for the board's tests: three builds on ``cpu`` (days
1-3) and build 3 on ``gpu-h100`` too, findings created newest build first, then oldest, then middle."""
from __future__ import annotations

from dashboard.regressions.models import Regression
from dashboard.results.models import Build, Series
from tests.dashboard.page_history import ingest_build, sha_for


def board_history() -> dict[int, Build]:
    for day in (1, 2, 3):
        ingest_build(day)
    ingest_build(3, machine_class="gpu-h100")
    Regression.objects.all().delete()  # only the findings below
    builds = {day: Build.objects.get(git_sha=sha_for(day)) for day in (1, 2, 3)}

    def finding(day: int, machine_class: str, regime: str, **fields) -> Regression:
        series = Series.objects.get(machine_class=machine_class, workload__name="mlp_loop", config__tags__shape_regime=regime)
        return Regression.objects.create(
            series=series, first_bad_build=builds[day], last_good_build=builds.get(day - 1), raised_build=builds[day],
            kind="regression", **fields,
        )

    finding(3, "cpu", "static", metric="speedup", finding="change_point", before_value=1.25, after_value=1.0,
            magnitude=-0.2, confidence=0.97, details={"message": "speedup fell", "noise": 0.03})
    finding(3, "gpu-h100", "static", metric="speedup", finding="change_point", before_value=1.3, after_value=1.1,
            magnitude=-0.15, confidence=0.9, details={"message": "speedup fell", "noise": 0.02})
    finding(1, "cpu", "unbacked", metric="dynamic_gap", finding="dynamic_gap", before_value=None, after_value=-0.19,
            magnitude=-0.19, details={"message": "gap", "gap": -0.19})
    finding(2, "cpu", "unbacked", metric="dynamic_gap", finding="dynamic_gap", before_value=0.4493, after_value=-0.1918,
            magnitude=-0.1918, details={"message": "gap", "gap": -0.1918, "previous_gap": 0.4493})
    finding(3, "cpu", "backed", metric="status", finding="started_failing", details={"before": "pass", "after": "compile_error"})
    return builds
