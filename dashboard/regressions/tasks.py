"""Celery tasks of the regressions app (queue ``analysis``)."""
from celery import shared_task
from django.apps import apps

from dashboard.regressions.services import detection_run


@shared_task(name="regressions.detect_run", queue="analysis", acks_late=True)
def detect_run(run_id: str) -> dict:
    """Detection over one ingested run; idempotent, so a redelivered task creates nothing twice.
    Then the run's alerts are planned (queue ``alerts``; a run's alerts go out once)."""
    outcome = detection_run(run_id=run_id).as_dict()
    if apps.is_installed("dashboard.alerts"):
        from dashboard.alerts.tasks import plan_run  # noqa: PLC0415 (optional app)

        plan_run.delay(run_id)
    return outcome
