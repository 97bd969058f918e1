"""Celery tasks of the regressions app (queue ``analysis``)."""
from celery import shared_task

from dashboard.regressions.services import detection_run


@shared_task(name="regressions.detect_run", queue="analysis", acks_late=True)
def detect_run(run_id: str) -> dict:
    """Detection over one ingested run; idempotent, so a redelivered task creates nothing twice."""
    return detection_run(run_id=run_id).as_dict()
