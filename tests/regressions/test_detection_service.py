"""Detection over stored runs: planted changes are found once, noise is not, findings are exact."""
from __future__ import annotations

import random

import pytest
from django.test import Client

from dashboard.regressions.models import AlertSummary, Regression, Remeasurement
from dashboard.regressions.services import detection_run
from tests.dashboard.page_history import ingest_build, sha_for
from tests.regressions.history import case, host_history, speedup_history

pytestmark = pytest.mark.django_db


def detect_all(runs):
    return [detection_run(run_id=run.id) for run in runs]


def test_a_planted_step_is_found_once_at_its_first_bad_build():
    runs = speedup_history([1.25] * 14 + [1.10] * 3)
    detect_all(runs)
    found = Regression.objects.filter(finding="change_point", metric="speedup")
    assert found.count() == 1
    regression = found.get()
    assert regression.kind == "regression"
    assert regression.first_bad_build_id == runs[14].build_id
    assert regression.last_good_build_id == runs[13].build_id
    assert regression.magnitude == pytest.approx(-0.12, abs=0.02)
    assert regression.confidence >= 0.99
    assert regression.summary.run_id in {r.id for r in runs[14:]}
    # The latency of the compiled side moved with it, in the other direction of goodness.
    latency = Regression.objects.get(finding="change_point", metric="compiled_latency_ms")
    assert latency.kind == "regression" and latency.first_bad_build_id == runs[14].build_id


def test_detection_is_idempotent():
    runs = speedup_history([1.25] * 14 + [1.10] * 3)
    detect_all(runs)
    before = sorted(Regression.objects.values_list("id", flat=True))
    again = detect_all(runs)
    assert sorted(Regression.objects.values_list("id", flat=True)) == before
    assert all(outcome.created == [] for outcome in again)
    assert AlertSummary.objects.count() == len(runs)


def test_pure_noise_raises_nothing():
    runs = speedup_history([1.25] * 25, seed=11, regimes=("static", "backed"))
    detect_all(runs)
    assert not Regression.objects.filter(finding="change_point").exists()


def test_an_improvement_is_kept_apart():
    runs = speedup_history([1.25] * 14 + [1.45] * 3)
    detect_all(runs)
    assert Regression.objects.get(finding="change_point", metric="speedup").kind == "improvement"


def test_ingest_enqueues_detection_after_commit(django_capture_on_commit_callbacks, monkeypatch):
    from dashboard.celery import app

    # The task itself runs in this process (the worker side is tested in tests/dashboard/test_celery_ingest.py).
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    with django_capture_on_commit_callbacks(execute=True):
        runs = speedup_history([1.25] * 14 + [1.10] * 3)
    assert AlertSummary.objects.filter(run__in=runs).count() == len(runs)
    assert Regression.objects.filter(finding="change_point", metric="speedup").count() == 1


def test_a_new_graph_break_reason_is_reported_with_its_text():
    rng = random.Random(1)
    ingest_build(1, [case(1.25, rng=rng)])
    new_break = {"reason": "Unsupported: call_function BuiltinVariable(print)", "location": "model.py:40", "count": 1}
    document = ingest_build(2, [case(1.25, rng=rng, graph_break_count=2)])
    from dashboard.results.models import Result  # the document's break list, plus one

    Result.objects.filter(run_id=document["run"]["id"]).update(
        graph_breaks=[{"reason": "Tensor.item", "location": "model.py:12", "count": 1}, new_break])
    detection_run(run_id=document["run"]["id"])
    finding = Regression.objects.get(finding="new_graph_break")
    assert finding.metric == "graph_breaks" and finding.kind == "regression"
    assert finding.details["reasons"] == [new_break["reason"]]
    assert "model.py:40" in finding.message


def test_a_case_that_starts_failing_is_reported_with_its_error():
    rng = random.Random(2)
    ingest_build(1, [case(1.25, rng=rng)])
    failing = case(1.25, rng=rng)
    failing.update(status="compile_error", error={"type": "InductorError", "message": "failed OrderedSet([u1])"})
    document = ingest_build(2, [failing])
    detection_run(run_id=document["run"]["id"])
    finding = Regression.objects.get(finding="started_failing")
    assert finding.details["reasons"] == ["InductorError: failed OrderedSet([u1])"]
    assert "pass -> compile_error" in finding.message


def test_more_recompiles_are_reported():
    rng = random.Random(3)
    ingest_build(1, [case(1.25, rng=rng, recompile_count=1)])
    more = case(1.25, rng=rng, recompile_count=3)
    more["recompiles"] = [{"reason": "tensor 'x' size mismatch at index 0. expected 8, actual 16", "count": 2}]
    document = ingest_build(2, [more])
    detection_run(run_id=document["run"]["id"])
    finding = Regression.objects.get(finding="new_recompile_reason")
    assert finding.before_value == 1 and finding.after_value == 3
    assert "size mismatch" in finding.details["reasons"][0]


def test_an_unbacked_gap_that_opens_is_reported_once():
    rng = random.Random(4)
    for day in (1, 2):
        ingest_build(day, [case(1.25, regime="backed", rng=rng), case(1.24, regime="unbacked", rng=rng)])
    document = ingest_build(3, [case(1.25, regime="backed", rng=rng), case(1.05, regime="unbacked", rng=rng)])
    detection_run(run_id=document["run"]["id"])
    detection_run(run_id=document["run"]["id"])
    finding = Regression.objects.get(finding="dynamic_gap")
    assert finding.series.config.case_config.shape_regime == "unbacked"
    assert finding.after_value == pytest.approx(1.05 / 1.25 - 1, abs=0.01)


def test_a_suspect_newest_build_is_re_measured_and_then_decided():
    runs = speedup_history([1.25] * 14 + [1.15])
    detect_all(runs)
    assert not Regression.objects.filter(finding="change_point", metric="speedup").exists()
    request = Remeasurement.objects.get(metric="speedup")
    assert request.status == "pending"
    assert request.build_id == runs[-1].build_id and request.baseline_build_id == runs[-2].build_id
    # The re-runs arrive: the new build is still slower, the previous one is not.
    rng = random.Random(99)
    rerun_new = ingest_build(15, [case(1.15, rng=rng)], sha=sha_for(15))
    ingest_build(14, [case(1.25, rng=rng)], sha=sha_for(14))
    detection_run(run_id=rerun_new["run"]["id"])
    request.refresh_from_db()
    assert request.status == "confirmed"
    assert request.regression.first_bad_build_id == runs[-1].build_id
    assert request.regression.details["confirmed_by"] == "remeasurement"


def test_a_suspect_that_does_not_reproduce_is_rejected():
    runs = speedup_history([1.25] * 14 + [1.15])
    detect_all(runs)
    rng = random.Random(98)
    rerun_new = ingest_build(15, [case(1.25, rng=rng)], sha=sha_for(15))
    ingest_build(14, [case(1.25, rng=rng)], sha=sha_for(14))
    detection_run(run_id=rerun_new["run"]["id"])
    request = Remeasurement.objects.get(metric="speedup")
    assert request.status in ("rejected", "inconclusive")
    assert not Regression.objects.filter(finding="change_point", metric="speedup").exists()


def test_a_host_bound_drop_on_a_slowed_host_is_re_measured_not_alerted():
    # resnet_train static on two lent H200 VMs: 1.52 with the host probe at 0.97 ms, 1.17 at 1.17 ms.
    runs = host_history([(1.52, 0.97)] * 14 + [(1.17, 1.17)] * 2, share=0.98)
    detect_all(runs)
    assert not Regression.objects.filter(finding="change_point", metric__in=("speedup", "compiled_latency_ms")).exists()
    request = Remeasurement.objects.get(metric="speedup", build_id=runs[-1].build_id)
    assert request.status == "pending" and request.baseline_build_id == runs[13].build_id
    assert request.suspect["host_slowed"]["slowdown"] == pytest.approx(1.17 / 0.97, abs=0.01)
    page = Client().get("/regressions/").content.decode()
    assert "host 1.21× slower" in page and "1.17 ms against 0.97 ms before" in page


@pytest.mark.parametrize("probe_after, share", [(0.9, 0.98), (1.8, 0.5)], ids=["host-at-speed", "not-host-bound"])
def test_the_host_gate_does_not_hide_a_real_drop(probe_after, share):
    # The same drop with the host at full speed, or in a case the host does not bound: alerted.
    runs = host_history([(1.51, 0.9)] * 14 + [(1.25, probe_after)] * 2, share=share)
    detect_all(runs)
    regression = Regression.objects.get(finding="change_point", metric="speedup")
    assert regression.kind == "regression" and regression.first_bad_build_id == runs[14].build_id


def test_an_unrunnable_re_measurement_is_decided_by_the_next_build():
    from dashboard.regressions.selectors import build_verdict

    runs = speedup_history([1.25] * 14 + [1.20, 1.25])
    detect_all(runs[:15])
    request = Remeasurement.objects.get(metric="speedup")  # no worker of the class: it cannot run
    assert build_verdict(build=runs[14].build, machine_class="cpu").verdict == "suspect"
    detect_all(runs[15:])
    request.refresh_from_db()
    assert request.status == "rejected" and request.decision["decided_by"] == "next_build"
    assert build_verdict(build=runs[14].build, machine_class="cpu").verdict == "pass"


def test_the_second_bad_build_is_regressed_too():
    from dashboard.regressions.selectors import build_verdict

    runs = speedup_history([1.25] * 14 + [1.20, 1.20])
    detect_all(runs)
    assert Regression.objects.get(metric="speedup", kind="regression").first_bad_build_id == runs[14].build_id
    assert [build_verdict(build=r.build, machine_class="cpu").verdict for r in runs[13:]] == ["pass", "regressed", "regressed"]


def test_a_two_build_suspect_is_decided_by_that_rule_on_its_re_runs():
    # The re-measurement of a suspect of the two-build confirmation (dashboard.regressions.two_build) is
    # decided by that rule on the build's runs: two re-runs that agree confirm it on its own build.
    runs = speedup_history([1.25] * 14 + [1.15])
    detect_all(runs)
    request = Remeasurement.objects.get(metric="speedup")
    request.suspect = {**request.suspect, "rule": "two_build"}
    request.save()
    rng = random.Random(99)
    for n in range(2):  # the suspect build's re-runs alone decide (not the baseline's)
        rerun_new = ingest_build(15, [case(1.15, rng=rng)], sha=sha_for(15))
        detection_run(run_id=rerun_new["run"]["id"])
        request.refresh_from_db()
        assert request.status == ("pending" if n == 0 else "confirmed")
    assert request.decision["rule"] == "two_build"
    regression = request.regression
    assert regression.first_bad_build_id == runs[-1].build_id and regression.details["confirmed_by"] == "remeasurement"
    assert "two-build confirmation, re-measured" in regression.details["message"] and regression.magnitude < -0.05


@pytest.mark.parametrize("rerun, held", [(1.235, "confirmed"), (1.25, "rejected")], ids=["re-run-agrees", "re-run-back"])
def test_an_engine_alert_is_held_until_its_newest_build_is_re_run(rerun, held):
    # A 1.2 % drop (3 noise sd) on four builds: the engine alerts on the fourth, the two-build rule not
    # at all; the alert waits for a re-run of that build (dashboard.regressions.engine_gate), which
    # stores it (first bad build the first of the four) or drops it.
    from dashboard.regressions.selectors import build_verdict

    runs = speedup_history([1.25] * 14 + [1.235] * 4)
    detect_all(runs[-1:])
    assert not Regression.objects.filter(finding="change_point", metric="speedup").exists()
    request = Remeasurement.objects.get(metric="speedup")
    assert request.status == "pending" and request.build_id == runs[-1].build_id
    assert request.suspect["rule"] == "engine_gate" and request.suspect["first_bad_build_id"] == runs[14].build_id
    assert build_verdict(build=runs[-1].build, machine_class="cpu").verdict == "suspect"
    again = ingest_build(18, [case(rerun, rng=random.Random(97))], sha=sha_for(18))
    detection_run(run_id=again["run"]["id"])
    request.refresh_from_db()
    assert request.status == held and request.decision["rule"] == "engine_gate"
    found = Regression.objects.filter(finding="change_point", metric="speedup")
    verdict = build_verdict(build=runs[-1].build, machine_class="cpu").verdict
    if held == "rejected":
        assert not found.exists() and verdict == "pass"
        return
    regression = found.get()
    assert regression.first_bad_build_id == runs[14].build_id and regression.raised_build_id == runs[-1].build_id
    assert regression.details["rule"] == "engine_gate" and regression.details["confirmed_by"] == "remeasurement"
    assert request.regression_id == regression.id and verdict == "regressed"
