"""Celery tasks of the alerts app (queue ``alerts``)."""
from celery import shared_task
from django.conf import settings

from dashboard.alerts.models import Delivery
from dashboard.alerts.services import delivery_plan_run, delivery_send


@shared_task(name="alerts.plan_run", queue="alerts", acks_late=True)
def plan_run(run_id: str) -> list[int]:
    """After detection of a run: its deliveries, one per interested subscription (at most once per run)."""
    return delivery_plan_run(run_id=run_id)


@shared_task(bind=True, name="alerts.send_delivery", queue="alerts", acks_late=True, max_retries=None)
def send_delivery(self, delivery_id: int) -> str:
    """One try per execution; a failure worth retrying comes back after the next countdown of
    ``ALERTS_RETRY_COUNTDOWNS_S`` (so at most 1 + len(countdowns) tries), then the delivery is failed.
    Run in-process (no broker: nothing would run a retry later) the tries follow at once."""
    countdowns = settings.ALERTS_RETRY_COUNTDOWNS_S
    tries = self.request.retries
    while True:
        delivery = delivery_send(delivery_id=delivery_id, last_try=tries >= len(countdowns))
        if delivery.status != Delivery.Status.RETRYING:
            return delivery.status
        if not self.request.is_eager:
            raise self.retry(countdown=countdowns[tries], max_retries=len(countdowns))
        tries += 1
