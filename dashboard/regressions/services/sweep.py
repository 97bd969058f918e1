"""The beat sweep (``regressions.sweep``, every two minutes): whatever a lost message left undone
after a commit is sent again. Runs stored with results that detection never went over (Redis was
down when the ingest committed, a worker died, a retry ran out), and, with the alerts app, detected
runs whose alerts were never planned and deliveries never sent. Every one of these tasks is
idempotent, so sending one twice (the first message was only slow) does nothing twice."""
from __future__ import annotations

import datetime as dt

from django.apps import apps
from django.conf import settings
from django.utils import timezone

from dashboard.durable import send_logged
from dashboard.regressions.selectors import runs_detection_pending
from dashboard.results.models import Run

UNFINISHED = (Run.Status.PENDING, Run.Status.RUNNING)  # a dispatched run is detected once it finishes


def detection_sweep(*, now: dt.datetime | None = None, grace: dt.timedelta | None = None, limit: int = 200) -> dict:
    """Send detection for each finished run stored before ``now - grace`` whose detection never
    completed (oldest first, at most ``limit``); then the alerts' own sweep. Returns the counts."""
    from dashboard.regressions.tasks import detect_run  # noqa: PLC0415 (our tasks import this module)

    if not settings.DETECT_AFTER_INGEST:
        return {"detections": 0}
    now = now or timezone.now()
    before = now - (grace if grace is not None else dt.timedelta(seconds=settings.DETECTION_SWEEP_GRACE_S))
    pending = runs_detection_pending(runs=Run.objects.filter(ingested_at__lt=before).exclude(status__in=UNFINISHED))
    run_ids = [str(i) for i in pending.order_by("ingested_at").values_list("id", flat=True)[:limit]]
    counts = {"detections": sum(send_logged(lambda r=r: detect_run.delay(r), what=f"detection of run {r}")
                                for r in run_ids)}
    if apps.is_installed("dashboard.alerts"):
        from dashboard.alerts.services import alerts_sweep  # noqa: PLC0415 (optional app)

        counts.update(alerts_sweep(before=before, limit=limit))
    return counts
