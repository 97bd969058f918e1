"""Detection in bounded chunks, at most once (issue #46 item 3): a run's series are detected a chunk
at a time, each committed with the run's DetectionPass; a task works for its budget and sends itself
on; a copy of the message finds the pass running (or done) and does nothing; the sweep resends only
a pass whose worker went silent, which is then taken over where it stopped; the findings are those
of one pass over the whole run; alerts and noise bands follow the last chunk only."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from dashboard.pipeline import services as pipeline
from dashboard.regressions.models import AlertSummary, DetectionPass, Regression
from dashboard.regressions.selectors import run_detection_pending
from dashboard.regressions.services import detection_run
from dashboard.regressions.services.detection_pass import detection_step
from dashboard.results.models import Run
from tests.dashboard.every_finding import every_finding_history

pytestmark = pytest.mark.django_db


def _findings() -> set[tuple]:
    return set(Regression.objects.values_list("series_id", "metric", "finding", "first_bad_build_id", "kind"))


@pytest.fixture
def newest(settings) -> Run:
    """Two builds whose second raises one finding of each deterministic kind (7 series), detected once."""
    settings.DETECTION_CHUNK_SERIES = 2
    every_finding_history()
    return Run.objects.order_by("-build__ordered_at").first()


def test_chunks_find_what_one_pass_finds(newest, settings):
    chunked = _findings()
    assert len(chunked) >= 7
    assert DetectionPass.objects.get(run=newest).finished_at is not None
    Regression.objects.all().delete()
    settings.DETECTION_CHUNK_SERIES = 1000
    outcome = detection_run(run_id=newest.id)
    assert outcome.done and _findings() == chunked


def test_a_step_stops_at_its_budget_and_only_its_pass_carries_on(newest):
    first = detection_step(run_id=newest.id, budget_s=0, restart=True)
    progress = DetectionPass.objects.get(run=newest)
    assert not first.done and progress.finished_at is None and progress.after_series > 0
    assert run_detection_pending(build=newest.build, machine_class="cpu")  # the verdict waits for the rest
    # A copy of the message (redelivered, or sent again) finds the pass at work: nothing done.
    copy = detection_step(run_id=newest.id, budget_s=None)
    assert copy.skipped == "running" and DetectionPass.objects.get(run=newest).after_series == progress.after_series
    # The continuation names its pass and goes on where the first step stopped.
    rest = detection_step(run_id=newest.id, budget_s=None, pass_started=first.pass_started)
    assert rest.done and rest.series_checked == 7 - first.series_checked
    assert not run_detection_pending(build=newest.build, machine_class="cpu")


def test_a_finished_pass_is_not_redone_until_new_results_arrive(newest):
    again = detection_step(run_id=newest.id, budget_s=None)
    assert again.skipped == "done" and again.series_checked == 0
    started = DetectionPass.objects.get(run=newest).started_at
    DetectionPass.objects.filter(run=newest).update(results=1)  # as if results were stored since it finished
    fresh = detection_step(run_id=newest.id, budget_s=None)
    assert fresh.done and fresh.series_checked == 7 and DetectionPass.objects.get(run=newest).started_at > started


def test_the_sweep_leaves_a_running_pass_and_takes_over_a_silent_one(newest, monkeypatch, settings):
    sent = []
    monkeypatch.setattr(pipeline, "detection_enqueue", lambda *, run_id: sent.append(run_id))
    first = detection_step(run_id=newest.id, budget_s=0, restart=True)
    later = timezone.now() + dt.timedelta(seconds=1)
    pipeline.detection_sweep(now=later, grace=dt.timedelta(0))
    assert str(newest.id) not in sent  # at work: not resent
    silent = timezone.now() - dt.timedelta(seconds=settings.DETECTION_LEASE_S + 1)
    DetectionPass.objects.filter(run=newest).update(beat_at=silent)
    pipeline.detection_sweep(now=later, grace=dt.timedelta(0))
    assert sent.count(str(newest.id)) == 1
    done_before = DetectionPass.objects.get(run=newest).series_checked
    taken_over = detection_step(run_id=newest.id, budget_s=None)  # the sweep's message: no pass named
    assert taken_over.done and taken_over.series_checked == 7 - first.series_checked
    assert DetectionPass.objects.get(run=newest).series_checked == done_before + taken_over.series_checked


def test_the_task_sends_itself_on_and_plans_alerts_after_the_last_chunk(newest, settings, monkeypatch):
    from dashboard.alerts import tasks as alert_tasks
    from dashboard.celery import app
    from dashboard.pipeline import tasks

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    settings.DETECTION_TASK_BUDGET_S = 0  # one chunk per task
    steps, planned = [], []
    step = tasks.detection_step
    monkeypatch.setattr(tasks, "detection_step", lambda **kw: steps.append(kw.get("pass_started")) or step(**kw))
    monkeypatch.setattr(alert_tasks.plan_run, "delay", lambda run_id: planned.append(run_id))
    Regression.objects.all().delete()
    AlertSummary.objects.filter(run=newest).delete()
    DetectionPass.objects.filter(run=newest).update(results=0)  # new results: a new pass
    outcome = tasks.detect_run(str(newest.id))
    assert len(steps) == 4 and steps[0] is None and len(set(steps[1:])) == 1  # 7 series, 2 a chunk
    assert not outcome["done"] and planned == [str(newest.id)]  # the first task's part; alerts once, at the end
    assert DetectionPass.objects.get(run=newest).finished_at is not None and len(_findings()) >= 7


def test_the_dashboard_visibility_timeout_outlasts_its_tasks(settings):
    from dashboard.settings import CELERY_BROKER_TRANSPORT_OPTIONS, CELERY_TASK_TIME_LIMIT

    assert CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] > CELERY_TASK_TIME_LIMIT
    assert settings.DETECTION_LEASE_S >= CELERY_TASK_TIME_LIMIT > settings.DETECTION_TASK_BUDGET_S
