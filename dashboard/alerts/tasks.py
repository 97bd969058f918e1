"""Celery tasks of the alerts app (queue ``alerts``)."""
from celery import shared_task
from django.conf import settings

from dashboard.alerts.models import Delivery
from dashboard.alerts.services import delivery_plan_run, delivery_send
from dashboard.durable import DB_RETRY


@shared_task(name="alerts.plan_run", queue="alerts", acks_late=True, **DB_RETRY)
def plan_run(run_id: str) -> list[int]:
    """After detection of a run: its deliveries, one per interested subscription (at most once per run)."""
    return delivery_plan_run(run_id=run_id)


@shared_task(bind=True, name="alerts.send_delivery", queue="alerts", acks_late=True, max_retries=None,
             autoretry_for=DB_RETRY["autoretry_for"], retry_backoff=DB_RETRY["retry_backoff"],
             retry_backoff_max=DB_RETRY["retry_backoff_max"], retry_kwargs={"max_retries": DB_RETRY["max_retries"]})
def send_delivery(self, delivery_id: int, attempts_before: int | None = None) -> str:
    """One try per execution; a failure worth retrying comes back after the next countdown of
    ``ALERTS_RETRY_COUNTDOWNS_S`` (so at most 1 + len(countdowns) tries), then the delivery is failed.
    Run in-process (no broker: nothing would run a retry later) the tries follow at once, by this
    loop: Celery's eager ``apply`` re-raises a retry instead of running it when
    ``CELERY_TASK_EAGER_PROPAGATES`` is set (it is: eager errors must surface). The countdowns are
    a list, not a doubling, and each retry carries its own ``attempts_before``, so ``self.retry``,
    not ``autoretry_for``.
    ``attempts_before``: a retry's count of the delivery's attempts when it was scheduled; a copy
    of the retry that the broker handed out again (a countdown past the dashboard's short
    visibility timeout) finds more and does nothing. A database error is retried (``DB_RETRY``)."""
    countdowns = settings.ALERTS_RETRY_COUNTDOWNS_S
    tries = self.request.retries
    while True:
        delivery = delivery_send(delivery_id=delivery_id, last_try=tries >= len(countdowns), attempts_before=attempts_before)
        if delivery is None:
            return "duplicate"
        if delivery.status != Delivery.Status.RETRYING:
            return delivery.status
        if not self.request.is_eager:
            raise self.retry(countdown=countdowns[tries], max_retries=len(countdowns),
                             kwargs={"delivery_id": delivery_id, "attempts_before": delivery.attempts.count()})
        tries, attempts_before = tries + 1, delivery.attempts.count()
