"""Bisection over builds (issue #31) through the dispatch services, the workers played by the test
(tests/bisect/planted.py): the planted change from the third of six builds is found on the third."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.dispatch.models import CaseTask
from dashboard.regressions.models import Bisection, BisectionRun
from dashboard.regressions.services.bisect import BisectError, bisection_advance, bisection_cancel, bisection_start
from dashboard.results.models import Run
from tests.bisect.planted import SHAS, measure, nightly, no_broker, open_cases, plant

pytestmark = pytest.mark.django_db


def test_the_planted_change_of_the_third_of_six_builds_is_found_on_the_third(monkeypatch, django_capture_on_commit_callbacks):
    sent = no_broker(monkeypatch)
    regression = plant()
    with django_capture_on_commit_callbacks(execute=True):
        bisection = bisection_start(regression=regression, requested_by="test")
    assert bisection.builds == [nightly(n).id for n in range(6)] and bisection.status == "running"
    # Both ends first, twice each, on the class's queue, as bisection runs of the case alone.
    runs = Run.objects.filter(bisection_attempt__bisection=bisection)
    assert sorted(r.build.git_sha for r in runs) == sorted([SHAS[0], SHAS[0], SHAS[5], SHAS[5]])
    assert {r.reason for r in runs} == {"bisection"} and [c["machine_class"] for c in sent] == ["cpu"] * 4
    case = CaseTask.objects.filter(run__in=runs).first()
    config = case.case_config
    assert (case.workload, config.shape_regime, config.compile_mode, config.device) == ("mlp_loop", "static", "default", "cpu")

    bisection = measure(bisection)  # the ends differ: the midpoint (build 3) is requested
    assert bisection.result["reproduced"] and [c.run.build.git_sha for c in open_cases(bisection)] == [SHAS[2]] * 2
    bisection = measure(bisection, rounds=3)
    assert bisection.status == "done", bisection.result
    assert (bisection.low, bisection.high) == (1, 2)
    assert bisection.culprit_build == nightly(2)
    assert [(s["index"], s["decision"]) for s in bisection.steps] == [(2, "bad"), (1, "good")]
    assert bisection.result["commits"] == f"{SHAS[1]}...{SHAS[2]}"
    assert "first bad build 333333333333 (torch 2.13.0), last good 222222222222" in bisection.result["message"] and "2 steps, 8 runs" in bisection.result["message"]
    regression.refresh_from_db()
    assert regression.culprit_build == nightly(2) and regression.culprit_range == f"{SHAS[1]}...{SHAS[2]}"
    # Bisection runs are no point of the series: its history still has the two measured builds only.
    from dashboard.regressions.history import series_points

    assert [p.build_id for p in series_points(series_id=regression.series_id)] == [nightly(0).id, nightly(5).id]
    assert bisection_advance(bisection_id=bisection.id).runs.count() == 8  # idempotent once ended


def test_a_lost_attempt_is_requested_again_and_an_unknown_midpoint_gets_more_attempts(monkeypatch):
    no_broker(monkeypatch)
    bisection = bisection_start(regression=plant(), requested_by="test")
    bisection = measure(bisection, lose={0})  # both runs of the good end time out: requested again
    assert bisection.result["lost"] == 2 and [c.run.build.git_sha for c in open_cases(bisection)] == [SHAS[0]] * 2
    bisection = measure(bisection)
    # Build 3 measured halfway between the levels: unknown, one more attempt at a time up to max_attempts.
    bisection = measure(bisection, value=lambda b: 2.5)
    assert bisection.status == "running" and [c.run.build.git_sha for c in open_cases(bisection)] == [SHAS[2]]
    bisection = measure(bisection, value=lambda b: 2.5, rounds=4)
    step = bisection.steps[0]
    assert (step["index"], step["how"], len(step["values"])) == (2, "nearest", 6)


def test_a_change_that_does_not_reproduce_ends_it(monkeypatch):
    no_broker(monkeypatch)
    bisection = bisection_start(regression=plant(), requested_by="test", max_attempts=3)
    bisection = measure(bisection, value=lambda b: 2.0, rounds=2)
    assert bisection.status == "not_reproduced" and "the ends do not differ" in bisection.result["message"]
    assert bisection.runs.count() == 6 and bisection.culprit_build is None


def test_bounds_steps_and_runs(monkeypatch):
    no_broker(monkeypatch)
    bisection = measure(bisection_start(regression=plant(), requested_by="test", max_steps=1), rounds=3)
    assert bisection.status == "inconclusive" and bisection.result["message"] == "1 steps spent"
    assert (bisection.low, bisection.high) == (0, 2)  # narrowed as far as it went
    bisection = bisection_start(regression=bisection.regression, requested_by="test", max_runs=5)
    bisection = measure(bisection, rounds=2)
    assert bisection.status == "failed" and "case budget spent: 4 of 5" in bisection.result["message"]


def test_cancel_stops_its_runs(monkeypatch):
    no_broker(monkeypatch)
    bisection = bisection_start(regression=plant(), requested_by="test")
    bisection = bisection_cancel(bisection_id=bisection.id, cancelled_by="alice")
    assert bisection.status == "cancelled" and bisection.result["message"] == "cancelled by alice"
    assert set(Run.objects.filter(bisection_attempt__bisection=bisection).values_list("status", flat=True)) == {"cancelled"}
    assert not open_cases(bisection)


def test_only_builds_a_worker_of_the_class_knows_are_searched(monkeypatch):
    no_broker(monkeypatch)
    bisection = bisection_start(regression=plant(known={0, 3, 5}), requested_by="test")
    assert bisection.builds == [nightly(0).id, nightly(3).id, nightly(5).id]


def test_what_cannot_be_bisected_is_refused_naming_the_field(monkeypatch):
    no_broker(monkeypatch)
    regression = plant(known={0, 5})
    with pytest.raises(BisectError) as adjacent:
        bisection_start(regression=regression, requested_by="test")
    assert adjacent.value.field == "last_good_build" and "adjacent already" in adjacent.value.message
    assert not Bisection.objects.exists() and not BisectionRun.objects.exists()
    with pytest.raises(BisectError) as kind:
        bisection_start(regression=regression, requested_by="test", kind="overrides")
    assert kind.value.field == "kind" and "not a variant" in kind.value.message


def test_a_start_that_races_another_is_refused_naming_status_not_a_500(monkeypatch, client):
    """Issue #46 item 9: 50 concurrent bisect requests gave 2 x 500 (IntegrityError on the one-running
    constraint). A competing start committed between the check and the insert: 409-style BisectError."""
    from dashboard.regressions.services import bisect as service

    no_broker(monkeypatch)
    regression = plant()
    between = service.builds_between

    def racing(**kwargs):
        Bisection.objects.create(regression=regression, series=regression.series, metric=regression.metric, builds=[],
                                 low=0, high=0, requested_by="the other request")
        return between(**kwargs)

    monkeypatch.setattr(service, "builds_between", racing)
    with pytest.raises(BisectError) as raced:
        bisection_start(regression=regression, requested_by="test")
    assert raced.value.field == "status" and "being bisected already" in raced.value.message


def test_manage_py_bisect(monkeypatch, capsys):
    no_broker(monkeypatch)
    regression = plant()
    call_command("bisect", str(regression.id), "--attempts", "1")
    out = capsys.readouterr().out
    assert out.startswith("bisection ") and "running, 6 builds, 2 runs (2 open, 0 lost)" in out
    assert "measuring" in out.splitlines()[1]
    with pytest.raises(CommandError) as twice:
        call_command("bisect", str(regression.id))
    assert twice.value.returncode == 2 and "being bisected already" in str(twice.value)
    with pytest.raises(CommandError) as unknown:
        call_command("bisect", "999999")
    assert unknown.value.returncode == 2 and str(unknown.value) == "REGRESSION_ID: no regression 999999"
    call_command("bisect", str(regression.id), "--cancel")
    assert "cancelled" in capsys.readouterr().out


def test_new_regressions_of_a_listed_class_are_bisected_automatically_once(monkeypatch, settings):
    from dashboard.regressions.services.bisect_auto import bisections_start_auto

    no_broker(monkeypatch)
    regression = plant()
    settings.BISECT_AUTO_CLASSES = ["h100"]
    assert bisections_start_auto(regression_ids=[regression.id]) == []
    settings.BISECT_AUTO_CLASSES = ["cpu"]
    [started] = bisections_start_auto(regression_ids=[regression.id])
    assert Bisection.objects.get(pk=started).requested_by == "automatic"
    bisection_cancel(bisection_id=started, cancelled_by="test")
    assert bisections_start_auto(regression_ids=[regression.id]) == []  # bisected once already


def test_subscribers_hear_of_the_result_once(monkeypatch):
    from dashboard.alerts.compose import message_for_delivery
    from dashboard.alerts.models import Delivery, Subscription
    from dashboard.alerts.services import delivery_plan_bisection

    no_broker(monkeypatch)
    Subscription.objects.create(name="on-call", channel="email", target="oncall@example.com")
    Subscription.objects.create(name="gpu only", channel="email", target="gpu@example.com", machine_classes=["h100"])
    bisection = bisection_start(regression=plant(), requested_by="test")
    assert delivery_plan_bisection(bisection_id=bisection.id) == []  # still running: nothing to say
    bisection = measure(bisection, rounds=4)
    [delivery_id] = delivery_plan_bisection(bisection_id=bisection.id)
    assert delivery_plan_bisection(bisection_id=bisection.id) == []
    message = message_for_delivery(Delivery.objects.get(pk=delivery_id))
    assert message.subject == "[ptbench] bisection culprit found: mlp_loop default/static/float32/cpu on cpu, compiled_latency_ms"
    assert "first bad build 333333333333" in message.text and f"/regressions/{bisection.regression_id}/" in message.text
    assert f"https://github.com/pytorch/pytorch/compare/{SHAS[1]}...{SHAS[2]}" in message.text


def test_the_sweep_moves_on_a_bisection_whose_message_was_lost(monkeypatch):
    import datetime as dt

    from django.utils import timezone

    from dashboard.dispatch.services import case_finished, case_started
    from dashboard.pipeline import services as pipeline
    from dashboard.regressions.selectors.bisect import bisections_stalled
    from tests.bisect.planted import document, latency_of

    no_broker(monkeypatch)
    advanced = []
    monkeypatch.setattr(pipeline, "bisection_advance_enqueue", lambda *, bisection_id: advanced.append(bisection_id))
    bisection = bisection_start(regression=plant(), requested_by="test")
    for case in open_cases(bisection):  # the runs end, and the message that would move it on is lost
        case_started(case_id=case.id, worker="w0@box", hostname="box")
        case_finished(case_id=case.id, document=document(case.run.build, run_id=str(case.run_id), latency=latency_of(case.run.build)))
    assert bisections_stalled(before=timezone.now() - dt.timedelta(minutes=2)) == []  # just now: its message may be on the way
    later = timezone.now() + dt.timedelta(minutes=5)
    assert pipeline.detection_sweep(now=later)["bisections"] == 1 and advanced == [bisection.id]
    bisection_advance(bisection_id=bisection.id)
    assert bisections_stalled(before=later) == []  # its midpoint's runs are open
