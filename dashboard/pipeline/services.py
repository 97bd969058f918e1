"""The steps after a run is stored: detection once it is in, sent after the commit; then its alerts
(``tasks.detect_run``); and the beat sweep that sends again what a lost message left undone."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dashboard.alerts.services import alerts_sweep
from dashboard.durable import send_after_commit, send_logged
from dashboard.regressions.models import BisectionRun
from dashboard.regressions.selectors import runs_detection_pending, runs_detection_running
from dashboard.regressions.selectors.bisect import bisections_stalled
from dashboard.results.models import Run
from dashboard.results.services import IngestOutcome, run_ingest


def detection_enqueue(*, run_id: str) -> None:
    """Regression detection over the new results: a task on the ``analysis`` queue (in-process
    when Celery runs eagerly)."""
    from dashboard.pipeline.tasks import detect_run  # noqa: PLC0415 (our tasks import this module)

    detect_run.delay(run_id)


def _detection_after_commit(run_id: str) -> None:
    send_after_commit(lambda: detection_enqueue(run_id=run_id), what=f"detection of run {run_id}")


def run_ingest_and_detect(*, document: dict | bytes | str, size_bytes: int | None = None, detect: bool = True,
                          prepare: Callable[[dict], None] | None = None, imported: bool = False) -> IngestOutcome:
    """Store a run document (``results.services.run_ingest``, whose arguments and errors these are)
    and, once it commits, send detection over it when it stored new results.

    ``detect=False``: the caller starts detection itself. A variant's results are an experiment, not
    the next point of its base's trends: detection judges them against its base build instead
    (``regressions.services.detection``). ``DETECT_AFTER_INGEST`` off: no detection.
    """
    with transaction.atomic():
        outcome = run_ingest(document=document, size_bytes=size_bytes, prepare=prepare, imported=imported)
        if outcome.results_created and detect and settings.DETECT_AFTER_INGEST:
            _detection_after_commit(outcome.run_id)
    return outcome


def on_run_finished(sender, *, run: Run, **kwargs) -> None:
    """A dispatched run closed (``dispatch.signals.run_finished``): detection runs once over the
    whole run, after the commit (a variant's: against its base build). A bisection's run moves its
    bisection on (docs/bisect.md)."""
    if settings.DETECT_AFTER_INGEST:
        _detection_after_commit(str(run.id))
    if run.reason == Run.Reason.BISECTION:
        bisection_id = BisectionRun.objects.filter(run=run).values_list("bisection_id", flat=True).first()
        if bisection_id is not None:
            send_after_commit(lambda: bisection_advance_enqueue(bisection_id=bisection_id),
                              what=f"bisection {bisection_id}")


def bisection_advance_enqueue(*, bisection_id: int) -> None:
    from dashboard.pipeline.tasks import bisect_advance  # noqa: PLC0415 (our tasks import this module)

    bisect_advance.delay(bisection_id)


UNFINISHED = (Run.Status.PENDING, Run.Status.RUNNING)  # a dispatched run is detected once it finishes


def detection_sweep(*, now: dt.datetime | None = None, grace: dt.timedelta | None = None, limit: int = 200) -> dict:
    """The beat sweep (``regressions.sweep``, every two minutes): whatever a lost message left undone
    after a commit is sent again. Detection for each finished run stored before ``now - grace``
    whose detection never completed (Redis was down when the ingest committed, a worker died, a
    retry ran out; oldest first, at most ``limit``), never one whose pass is at work; then detected runs whose
    alerts were never planned and deliveries never sent. Every one of these tasks is idempotent, so
    sending one twice (the first message was only slow) does nothing twice. Returns the counts."""
    now = now or timezone.now()
    before = now - (grace if grace is not None else dt.timedelta(seconds=settings.DETECTION_SWEEP_GRACE_S))
    stalled = bisections_stalled(before=before)[:limit]  # a lost advance message: the bisection waits on nothing
    bisections = sum(send_logged(lambda b=b: bisection_advance_enqueue(bisection_id=b), what=f"bisection {b}") for b in stalled)
    if not settings.DETECT_AFTER_INGEST:
        return {"detections": 0, "bisections": bisections}
    # A pass at work (a chunk committed within the lease) is not sent again: only a silent one is taken over.
    running = runs_detection_running(since=now - dt.timedelta(seconds=settings.DETECTION_LEASE_S)).values("run_id")
    pending = (runs_detection_pending(runs=Run.objects.filter(ingested_at__lt=before).exclude(status__in=UNFINISHED))
               .exclude(pk__in=running))
    run_ids = [str(i) for i in pending.order_by("ingested_at").values_list("id", flat=True)[:limit]]
    counts = {"detections": sum(send_logged(lambda r=r: detection_enqueue(run_id=r), what=f"detection of run {r}")
                                for r in run_ids)}
    counts["bisections"] = bisections
    counts.update(alerts_sweep(before=before, limit=limit))
    return counts
