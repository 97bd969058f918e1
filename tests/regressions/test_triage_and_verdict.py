"""Triage is recorded and respected; the CI verdict reads it."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from dashboard.regressions.history import series_points
from dashboard.regressions.models import Regression, RegressionStatusChange
from dashboard.regressions.selectors import build_verdict, regression_list
from dashboard.regressions.services import detection_run, regression_triage
from dashboard.regressions.verdict import verdict_against
from tests.regressions.history import host_history, speedup_history

pytestmark = pytest.mark.django_db


@pytest.fixture
def stepped():
    runs = speedup_history([1.25] * 14 + [1.10] * 3)
    for run in runs:
        detection_run(run_id=run.id)
    return runs


def test_triage_records_who_when_and_why(stepped):
    regression = Regression.objects.get(finding="change_point", metric="speedup")
    assert regression_triage(regression_ids=[regression.id], status="acknowledged", user="alice", note="bisecting") == 1
    regression.refresh_from_db()
    assert (regression.status, regression.status_changed_by, regression.note) == ("acknowledged", "alice", "bisecting")
    change = RegressionStatusChange.objects.get(regression=regression)
    assert (change.from_status, change.to_status, change.changed_by) == ("untriaged", "acknowledged", "alice")


def test_bulk_triage_is_all_or_nothing(stepped):
    ids = list(Regression.objects.values_list("id", flat=True))
    with pytest.raises(ValidationError) as exc:
        regression_triage(regression_ids=[*ids, 999_999], status="fixed", user="bob")
    assert "regression_ids" in exc.value.message_dict
    assert not Regression.objects.filter(status="fixed").exists()
    with pytest.raises(ValidationError) as exc:
        regression_triage(regression_ids=ids, status="solved", user="bob")
    assert "status" in exc.value.message_dict
    assert regression_triage(regression_ids=ids, status="investigating", user="bob") == len(ids)


def test_an_invalid_point_leaves_later_baselines(stepped):
    regression = Regression.objects.get(finding="change_point", metric="speedup")
    regression_triage(regression_ids=[regression.id], status="invalid", user="carol")
    bad_build = regression.first_bad_build_id
    points = series_points(series_id=regression.series_id, excluded={("speedup", bad_build)})
    assert next(p for p in points if p.build_id == bad_build).values["speedup"] is None
    # Detection again: the invalid record stays invalid and nothing is created for that build.
    for run in stepped:
        detection_run(run_id=run.id)
    regression.refresh_from_db()
    assert regression.status == "invalid"
    assert not Regression.objects.filter(metric="speedup", finding="change_point", status="untriaged",
                                         first_bad_build_id=bad_build).exists()


def test_verdict_against_the_previous_build(stepped):
    bad = stepped[14].build
    verdict = build_verdict(build=bad, machine_class="cpu")
    assert verdict.verdict == "regressed" and verdict.reason == "regressions_found"
    assert verdict.baseline == stepped[13].build
    assert {r["metric"] for r in verdict.regressions} >= {"speedup"}
    assert build_verdict(build=stepped[10].build, machine_class="cpu").verdict == "pass"
    assert build_verdict(build=stepped[0].build, machine_class="cpu").reason == "no_baseline"
    assert (build_verdict(build=bad, machine_class="gpu-h100").verdict, build_verdict(build=bad, machine_class="gpu-h100").reason) == ("pending", "no_results")
    # A regression triaged as won't-fix no longer fails the build.
    regression_triage(regression_ids=list(regression_list(build=bad).values_list("id", flat=True)), status="wontfix", user="dan")
    assert build_verdict(build=bad, machine_class="cpu").verdict == "pass"


def test_verdict_against_a_named_baseline(stepped):
    found = verdict_against(build=stepped[16].build, baseline=stepped[3].build, machine_class="cpu")
    assert any(f["metric"] == "speedup" and f["magnitude"] < -0.08 for f in found)
    verdict = build_verdict(build=stepped[12].build, baseline=stepped[3].build, machine_class="cpu")
    assert verdict.verdict == "pass"
    assert verdict.to_dict()["baseline"]["git_sha"] == stepped[3].build.git_sha


def test_a_named_baseline_verdict_lists_a_drop_on_a_slowed_host_without_failing():
    from dashboard.api.serializers import VerdictSerializer

    runs = host_history([(1.51, 0.9)] * 14 + [(1.25, 1.8)] * 2, share=0.98)
    verdict = build_verdict(build=runs[-1].build, baseline=runs[3].build, machine_class="cpu")
    assert verdict.verdict == "suspect" and verdict.reason == "suspects_found"  # moved, not confirmed
    speedup = next(f for f in verdict.regressions if f["metric"] == "speedup")
    assert speedup["kind"] == "suspect" and "not counted" in speedup["message"]
    shown = VerdictSerializer().fields["regressions"].to_representation(verdict.regressions)
    assert next(f for f in shown if f["metric"] == "speedup")["host_slowed"]["slowdown"] == pytest.approx(2.0, abs=0.01)


def test_the_same_drop_with_the_host_at_full_speed_fails_the_build():
    runs = host_history([(1.51, 0.9)] * 14 + [(1.25, 0.9)] * 2, share=0.98)
    verdict = build_verdict(build=runs[-1].build, baseline=runs[3].build, machine_class="cpu")
    assert verdict.verdict == "regressed"
    assert {f["metric"] for f in verdict.regressions} >= {"speedup"}
    assert all(f["kind"] == "regression" and "host_slowed" not in f for f in verdict.regressions)
