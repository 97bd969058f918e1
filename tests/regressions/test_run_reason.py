"""#34: ``Run.reason``. Only nightly and requested runs raise findings; a re-measurement run only
decides its suspects, a bisection run is never a point of a series (the API and the run page:
tests/api/test_run_reason_api.py)."""
from __future__ import annotations

import pytest

from dashboard.regressions.history import series_points
from dashboard.regressions.models import AlertSummary, Regression
from dashboard.regressions.selectors import build_verdict
from dashboard.regressions.services import detection_run
from dashboard.results.models import Run, Series
from tests.regressions.history import speedup_history

pytestmark = pytest.mark.django_db
LEVELS = [1.25] * 14 + [1.10] * 3  # a 12 % drop over the last three builds


def _detected(reason_of_last: str | None) -> list[Run]:
    runs = speedup_history(LEVELS)
    if reason_of_last:
        Run.objects.filter(pk__in=[r.id for r in runs[14:]]).update(reason=reason_of_last)
    for run in runs:
        detection_run(run_id=run.id)
    return runs


def test_a_nightly_drop_is_a_finding():  # the same history as below, as nightlies: found
    _detected(None)
    assert Regression.objects.filter(metric="speedup", kind="regression").exists()


@pytest.mark.parametrize("reason", ["remeasurement", "bisection"])
def test_re_measurement_and_bisection_runs_raise_no_finding_of_their_own(reason):
    runs = _detected(reason)
    assert Regression.objects.count() == 0
    assert AlertSummary.objects.filter(run__in=runs[14:]).count() == 3  # gone over: never pending
    assert build_verdict(build=runs[-1].build, machine_class="cpu").verdict == "pass"


def test_a_bisection_run_is_no_point_of_its_series():
    runs = speedup_history([1.25] * 3)
    series = Series.objects.get()
    assert len(series_points(series_id=series.id)) == 3
    Run.objects.filter(pk=runs[1].id).update(reason="bisection")
    assert [p.build_id for p in series_points(series_id=series.id)] == [runs[0].build_id, runs[2].build_id]
