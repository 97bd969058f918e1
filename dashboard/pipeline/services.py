"""The steps after a run is stored: detection once it is in, sent after the commit."""
from __future__ import annotations

from collections.abc import Callable

from django.apps import apps
from django.conf import settings
from django.db import transaction

from dashboard.durable import send_after_commit
from dashboard.results.models import Run
from dashboard.results.services import IngestOutcome, run_ingest


def detection_enqueue(*, run_id: str) -> None:
    """Regression detection over the new results: a task on the ``analysis`` queue (in-process
    when Celery runs eagerly)."""
    if apps.is_installed("dashboard.regressions"):
        from dashboard.regressions.tasks import detect_run  # noqa: PLC0415 (optional app)

        detect_run.delay(run_id)


def _detection_after_commit(run_id: str) -> None:
    send_after_commit(lambda: detection_enqueue(run_id=run_id), what=f"detection of run {run_id}")


def run_ingest_and_detect(*, document: dict | bytes | str, size_bytes: int | None = None, detect: bool = True,
                          prepare: Callable[[dict], None] | None = None, imported: bool = False) -> IngestOutcome:
    """Store a run document (``results.services.run_ingest``, whose arguments and errors these are)
    and, once it commits, send detection over it when it stored new results.

    ``detect=False``: the caller starts detection itself. A variant's results are an experiment, not
    the next point of its base's trends: never detected. ``DETECT_AFTER_INGEST`` off: no detection.
    """
    with transaction.atomic():
        outcome = run_ingest(document=document, size_bytes=size_bytes, prepare=prepare, imported=imported)
        if outcome.results_created and detect and settings.DETECT_AFTER_INGEST and not outcome.variant:
            _detection_after_commit(outcome.run_id)
    return outcome


def on_run_finished(sender, *, run: Run, **kwargs) -> None:
    """A dispatched run closed (``dispatch.signals.run_finished``): detection runs once over the
    whole run, after the commit; a variant's run is not a trend point."""
    if settings.DETECT_AFTER_INGEST and not run.build.overrides:
        _detection_after_commit(str(run.id))
