"""#19 item 3: samples the detector cannot take (an integer past float range, zeros) never raise,
and one series whose detection fails is logged and skipped, never the end of the run's detection."""
from __future__ import annotations

import math
import random

import pytest

from detection import speedup_replicates
from detection.noise import between_build_noise, noise_summary, within_run_se, within_run_ses
from dashboard.regressions.models import Regression
from dashboard.regressions.services import detection, detection_run
from dashboard.results.models import Result
from tests.regressions.history import speedup_history

HUGE = 10**400  # "1" then 400 zeros: valid JSON, past float range


def test_noise_estimates_take_huge_zero_and_negative_samples():
    assert speedup_replicates([HUGE, 2.6, 2.4, 1e300, 0], [1, 2.0, 2.0, 1e-300, 1]) == [1.3, 1.2]
    assert math.isfinite(within_run_se([HUGE, 0, -1, 2.6, 2.4, 2.5]))
    assert math.isfinite(between_build_noise([HUGE, 1.0, 1.1, 0, 1.2, 1.05]))
    assert math.isfinite(noise_summary([1.0, 1.1, 1.2, 1.05], [[HUGE, 2.6, 2.4, 2.5]] * 4)["within_run"])


@pytest.mark.django_db
def test_stored_huge_samples_do_not_stop_detection():
    runs = speedup_history([1.25] * 14 + [1.10] * 3, regimes=("static", "backed"))
    for result in Result.objects.filter(config__tags__shape_regime="static"):
        result.samples = {**result.samples, "eager_ms": [HUGE] + result.samples["eager_ms"][1:]}
        result.save(update_fields=["samples"])
    outcomes = [detection_run(run_id=run.id) for run in runs]
    assert all(o.series_failed == [] for o in outcomes)
    assert Regression.objects.filter(finding="change_point", metric="speedup", series__config__tags__shape_regime="static").count() == 1


@pytest.mark.django_db
def test_one_failing_series_is_skipped_and_logged(monkeypatch, caplog):
    runs = speedup_history([1.25] * 14 + [1.10] * 3, regimes=("static", "backed"))
    original = detection._deterministic_findings

    def fails_on_static(*, series, **kwargs):
        if series.config.case_config.shape_regime == "static":
            raise OverflowError("int too large to convert to float")
        return original(series=series, **kwargs)

    monkeypatch.setattr(detection, "_deterministic_findings", fails_on_static)
    outcomes = [detection_run(run_id=run.id) for run in runs]
    assert all(len(o.series_failed) == 1 and o.series_checked == 2 for o in outcomes)
    assert "failed; skipped" in caplog.text
    found = Regression.objects.filter(finding="change_point", metric="speedup")
    assert [r.series.config.case_config.shape_regime for r in found] == ["backed"]  # static's findings rolled back


def test_within_run_ses_are_within_run_se_to_the_bit():
    """The batched form (/compare/'s noise bands) gives each run exactly the one-run answer, whatever
    the runs' lengths and however many of their samples a log cannot take."""
    rng = random.Random(3)
    runs = [[rng.lognormvariate(0, 0.05) * 2.5 for _ in range(rng.choice((2, 3, 5, 8, 8, 8, 30)))] for _ in range(400)]
    runs += [None, [], [1.0, 2.0], [HUGE, 0, -1, 2.6, 2.4, 2.5], [float("nan"), 2.0, 2.1, 2.2], ["2.0", 2.1, 2.2, None]]
    expected = [within_run_se(run) for run in runs]
    got = within_run_ses(runs)
    assert [repr(x) for x in got] == [repr(x) for x in expected]  # nan included
