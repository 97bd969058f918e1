"""Detection over one run in bounded chunks, at most once (issue #46 item 3; docs/detection.md).

A run's series are gone over in id order, ``DETECTION_CHUNK_SERIES`` at a time; each chunk commits
its findings together with the run's ``DetectionPass`` (how far it got), under that row's lock. The
worker's task (``pipeline.tasks.detect_run``) works for ``DETECTION_TASK_BUDGET_S`` and then sends
itself on for the rest, naming its pass; so no task runs near its time limit or the broker's
visibility timeout, however large the run (40,000 results took one 268-300 s task before, past both).

At most once: a copy of the message (a redelivery, the sweep) finds the pass running and does
nothing; a pass that finished over the run's results is not redone (new results start a new one).
A pass silent for ``DETECTION_LEASE_S`` (its worker died) is taken over where it stopped.
"""
from __future__ import annotations

import datetime as dt
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dashboard.regressions.models import DetectionPass
from dashboard.regressions.services.detection import DetectionOutcome, detection_chunk, detection_priors
from dashboard.results.models import Result, Run, Series


def detection_run(*, run_id) -> DetectionOutcome:
    """The whole detection of a run, now, as a fresh pass (``detection_step``, chunk
    after chunk, each committed): commands, tests and benchmarks. The worker's task runs it in
    bounded steps instead."""
    return detection_step(run_id=run_id, budget_s=None, restart=True)


def detection_step(*, run_id, budget_s: float | None, restart: bool = False, pass_started: str | None = None) -> DetectionOutcome:
    """Chunks of the run's detection until it is done or ``budget_s`` has passed (None: until done).
    ``restart``: a fresh pass whatever stands; ``pass_started``: the pass a continuation carries on.
    The outcome says ``done``, or ``skipped`` ("running", "done") when there was nothing to do."""
    run = Run.objects.select_related("build", "machine").get(pk=run_id)
    outcome = DetectionOutcome(run_id=str(run.id))
    deadline = None if budget_s is None else time.monotonic() + budget_s
    priors = None
    claimed = False
    while True:
        with transaction.atomic():
            if claimed:
                progress = DetectionPass.objects.select_for_update().get(run=run)
            else:
                progress = _claim(run=run, restart=restart, pass_started=pass_started, outcome=outcome)
                if progress is None:
                    return outcome
                claimed = True
            if priors is None:
                priors = detection_priors(run=run)
            series_list = list(Series.objects.filter(results__run=run, id__gt=progress.after_series)
                               .select_related("config", "workload").distinct().order_by("id")[:settings.DETECTION_CHUNK_SERIES])
            checked = outcome.series_checked
            last = len(series_list) < settings.DETECTION_CHUNK_SERIES
            detection_chunk(run=run, series_list=series_list, priors=priors, outcome=outcome, first=progress.after_series == 0,
                            last=last)
            progress.series_checked += outcome.series_checked - checked
            progress.beat_at = timezone.now()
            if series_list:
                progress.after_series = series_list[-1].id
            if last:
                progress.finished_at = progress.beat_at
                outcome.done = True
            progress.save()
        outcome.pass_started = progress.started_at.isoformat()
        if outcome.done or (deadline is not None and time.monotonic() >= deadline):
            return outcome


def _claim(*, run: Run, restart: bool, pass_started: str | None, outcome: DetectionOutcome) -> DetectionPass | None:
    """The run's pass, locked, to work on: carried on (``pass_started`` names it, or its worker went
    silent), or a new one; None (``outcome.skipped`` says why) when another copy holds it or it
    finished over the results the run has now."""
    results = Result.objects.filter(run=run).count()
    DetectionPass.objects.get_or_create(run=run)
    progress = DetectionPass.objects.select_for_update().get(run=run)
    now = timezone.now()
    if not restart and progress.started_at is not None:
        if progress.finished_at is None:
            ours = pass_started is not None and progress.started_at.isoformat() == pass_started
            silent = progress.beat_at < now - dt.timedelta(seconds=settings.DETECTION_LEASE_S)
            if ours or silent:
                return progress
            outcome.skipped = "running"
            return None
        if progress.results == results:
            outcome.skipped = "done"
            return None
    progress.results, progress.after_series, progress.series_checked = results, 0, 0
    progress.started_at = progress.beat_at = now
    progress.finished_at = None
    return progress
