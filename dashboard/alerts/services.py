"""Writes of the alerts app: plan a run's deliveries, send one (one attempt, recorded), re-send,
send a test alert, create a subscription.

Which regressions a run's alert carries: the regression-kind, untriaged findings not yet alerted
(``Regression.notified_at`` empty) that detection attached to the run's alert summary, plus those that
reached an already alerted summary of the same machine class later (a re-measurement confirming a
suspect attaches its finding to the first run of that build): they go out with the next run. The run
is planned once, when it has finished (``AlertSummary.notified_at`` marks it); the regressions it
takes get ``notified_at`` in the same transaction, under row locks, so two runs never take the same
one. Findings no subscription wants are marked too: a subscription made later starts from new ones.
"""
from __future__ import annotations

import time

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from dashboard.alerts.compose import message_for_delivery
from dashboard.alerts.matching import subscription_wants
from dashboard.alerts.models import Delivery, DeliveryAttempt, Subscription, email_addresses
from dashboard.alerts.transport import SendFailure, email_send, slack_post
from dashboard.dispatch.models import Intake
from dashboard.durable import send_after_commit, send_logged
from dashboard.regressions.models import AlertSummary, Bisection, DetectionPass, Regression
from dashboard.results.models import Run

UNFINISHED = (Run.Status.PENDING, Run.Status.RUNNING)


def delivery_plan_run(*, run_id) -> list[int]:
    """One delivery per enabled subscription that wants at least one of the run's new regressions;
    each is sent by the ``alerts.send_delivery`` task once this commits. Returns the new deliveries'
    ids ([] for a run that is unfinished, already planned, or has nothing new). Safe to call again."""
    run = Run.objects.select_related("machine").get(pk=run_id)
    if run.status in UNFINISHED:
        return []  # a partial run: its findings go out when the run is complete
    created: list[int] = []
    with transaction.atomic():
        summary = AlertSummary.objects.select_for_update().filter(run=run).first()
        if summary is None or summary.notified_at is not None or DetectionPass.objects.filter(run=run, finished_at__isnull=True).exists():
            return []  # detection has not run or not finished, or this run's alerts were issued already
        candidates = Regression.objects.filter(
            Q(summary=summary) | Q(summary__notified_at__isnull=False, summary__machine_class=summary.machine_class),
            kind=Regression.Kind.REGRESSION, status=Regression.Status.UNTRIAGED, notified_at__isnull=True,
        ).values_list("id", flat=True)
        # Lock, then read again: a concurrent plan that took some of them has set notified_at.
        ids = list(Regression.objects.select_for_update().filter(pk__in=list(candidates), notified_at__isnull=True)
                   .order_by("id").values_list("id", flat=True))
        regressions = list(Regression.objects.filter(pk__in=ids).select_related("series__workload", "summary__run"))
        now = timezone.now()
        Regression.objects.filter(pk__in=ids).update(notified_at=now)
        summary.notified_at = now
        summary.save(update_fields=["notified_at"])
        for subscription in Subscription.objects.filter(enabled=True) if regressions else []:
            wanted = [r for r in regressions if _wants(subscription, r, default_size=run.size)]
            if not wanted:
                continue
            delivery, new = Delivery.objects.get_or_create(subscription=subscription, run=run, defaults={"kind": Delivery.Kind.RUN})
            if new:
                delivery.regressions.set(wanted)
                created.append(delivery.id)
        send_after_commit(lambda: _enqueue(created), what=f"deliveries {created}")
    return created


def delivery_plan_bisection(*, bisection_id: int) -> list[int]:
    """Once a bisection has ended (anything but cancelled): one delivery of its result per enabled
    subscription that wants its series and metric, sent once this commits; ``Bisection.notified_at``
    makes it once (docs/bisect.md). Returns the new deliveries' ids."""
    created: list[int] = []
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update(of=("self",)).select_related("series__workload", "regression").get(
            pk=bisection_id)
        if bisection.notified_at is not None or bisection.status in (Bisection.Status.RUNNING, Bisection.Status.CANCELLED):
            return []
        if bisection.partner_searches.filter(status=Bisection.Status.RUNNING).exists():
            return []  # its result is not complete: the partner search's end plans it
        bisection.notified_at = timezone.now()
        bisection.save(update_fields=["notified_at"])
        regression, series = bisection.regression, bisection.series
        for subscription in Subscription.objects.filter(enabled=True):
            if not subscription_wants(subscription, finding=regression.finding if regression else "change_point",
                                      metric=bisection.metric, magnitude=regression.magnitude if regression else None,
                                      machine_class=series.machine_class, workload=series.workload.name, size=bisection.size):
                continue
            delivery, new = Delivery.objects.get_or_create(subscription=subscription, bisection=bisection,
                                                           defaults={"kind": Delivery.Kind.BISECTION})
            if new:
                created.append(delivery.id)
        send_after_commit(lambda: _enqueue(created), what=f"deliveries {created}")
    return created


def delivery_plan_intake(*, intake_id: int) -> list[int]:
    """A failed intake (docs/builds.md): one delivery per enabled subscription of its machine class
    (or of every class) that wants breakages, sent once this commits, once per subscription."""
    created: list[int] = []
    with transaction.atomic():
        intake = Intake.objects.get(pk=intake_id)
        for subscription in Subscription.objects.filter(enabled=True).exclude(severity=Subscription.Severity.SLOWDOWN):
            if subscription.machine_classes and intake.machine_class not in subscription.machine_classes:
                continue
            delivery, new = Delivery.objects.get_or_create(subscription=subscription, intake=intake, defaults={"kind": Delivery.Kind.INTAKE})
            if new:
                created.append(delivery.id)
        send_after_commit(lambda: _enqueue(created), what=f"deliveries {created}")
    return created


def _wants(subscription: Subscription, regression: Regression, *, default_size: str) -> bool:
    run = regression.summary.run if regression.summary else None
    return subscription_wants(
        subscription, finding=regression.finding, metric=regression.metric, magnitude=regression.magnitude,
        machine_class=regression.series.machine_class, workload=regression.series.workload.name,
        size=run.size if run else default_size,
    )


def _enqueue(delivery_ids: list[int]) -> None:
    from dashboard.alerts.tasks import send_delivery  # noqa: PLC0415 (tasks import this module)

    for delivery_id in delivery_ids:
        send_delivery.delay(delivery_id)


def delivery_send(*, delivery_id: int, last_try: bool = True, attempts_before: int | None = None) -> Delivery | None:
    """One try to send a pending (or retrying) delivery, recorded as a ``DeliveryAttempt``.

    The delivery's row stays locked while it is sent, so two workers holding the same task (a
    redelivery) never both send it; a delivery already sent or given up on is left alone. A failure
    worth retrying leaves it ``retrying`` unless ``last_try``; anything else makes it ``failed``.
    ``attempts_before``: the attempts a retry expects to find; with more, another copy of it (the
    broker handed it out again) made this try already, and the answer is None.
    """
    with transaction.atomic():
        delivery = (Delivery.objects.select_for_update(of=("self",))
                    .select_related("subscription", "run__build", "run__machine").get(pk=delivery_id))
        if delivery.status not in (Delivery.Status.PENDING, Delivery.Status.RETRYING):
            return delivery
        if attempts_before is not None and delivery.attempts.count() != attempts_before:
            return None
        started, clock = timezone.now(), time.monotonic()
        failure = None
        try:
            _transmit(delivery)
        except SendFailure as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001 (a message that cannot be composed is recorded, not retried)
            failure = SendFailure("error", f"{type(exc).__name__}: {exc}", retryable=False)
        DeliveryAttempt.objects.create(
            delivery=delivery, number=delivery.attempts.count() + 1, started_at=started,
            duration_ms=round((time.monotonic() - clock) * 1000),
            outcome=DeliveryAttempt.Outcome.SENT if failure is None else failure.outcome,
            http_status=failure.http_status if failure else None, smtp_code=failure.smtp_code if failure else None,
            error=failure.error[:2000] if failure else "", retryable=bool(failure and failure.retryable),
        )
        if failure is None:
            delivery.status, delivery.sent_at, delivery.last_error = Delivery.Status.SENT, timezone.now(), ""
        else:
            retry = failure.retryable and not last_try
            delivery.status = Delivery.Status.RETRYING if retry else Delivery.Status.FAILED
            delivery.last_error = failure.error[:2000]
        delivery.save(update_fields=["status", "sent_at", "last_error"])
    return delivery


def _transmit(delivery: Delivery) -> None:
    message = message_for_delivery(delivery)
    subscription = delivery.subscription
    if subscription.channel == Subscription.Channel.EMAIL:
        email_send(to=email_addresses(subscription.target), subject=message.subject, text=message.text, html=message.html)
    else:
        slack_post(url=subscription.target.strip(), payload=message.slack)


def delivery_resend(*, delivery_ids: list[int]) -> list[int]:
    """Send failed deliveries again, each with a fresh round of retries. Returns the ids queued
    (deliveries not failed, e.g. sent ones, are left alone)."""
    with transaction.atomic():
        ids = list(Delivery.objects.select_for_update().filter(pk__in=delivery_ids, status=Delivery.Status.FAILED)
                   .values_list("id", flat=True))
        Delivery.objects.filter(pk__in=ids).update(status=Delivery.Status.PENDING)
        send_after_commit(lambda: _enqueue(ids), what=f"deliveries {ids}")
    return ids


def subscription_test_send(*, subscription_id: int) -> Delivery:
    """Send a test message through the subscription now (one try, enabled or not) and record it.
    Raises ``Subscription.DoesNotExist``."""
    subscription = Subscription.objects.get(pk=subscription_id)
    delivery = Delivery.objects.create(subscription=subscription, kind=Delivery.Kind.TEST)
    return delivery_send(delivery_id=delivery.id, last_try=True)


def subscription_create(*, name: str, channel: str, target: str, machine_classes: list[str] = (),
                        workloads: list[str] = (), sizes: list[str] = (), metrics: list[str] = (),
                        min_magnitude: float | None = None, severity: str = Subscription.Severity.BOTH,
                        enabled: bool = True, created_by: str = "") -> Subscription:
    """Raises ValidationError({field: [messages]}) and writes nothing when a field is bad."""
    subscription = Subscription(
        name=name, channel=channel, target=target.strip(), machine_classes=list(machine_classes), workloads=list(workloads),
        sizes=list(sizes), metrics=list(metrics), min_magnitude=min_magnitude, severity=severity, enabled=enabled,
        created_by=created_by,
    )
    subscription.full_clean()
    subscription.save()
    return subscription


def alerts_sweep(*, before, limit: int = 200) -> dict:
    """For the detection sweep: plan the alerts of runs detected before ``before`` and never
    planned, and send deliveries created before it and never tried (their messages were lost).
    Planning and sending are idempotent (row locks, ``notified_at``, the delivery's status)."""
    from dashboard.alerts.tasks import plan_run, send_delivery  # noqa: PLC0415 (tasks import this module)

    run_ids = [str(i) for i in AlertSummary.objects.filter(notified_at__isnull=True, created_at__lt=before)
               .exclude(run__status__in=UNFINISHED).exclude(run__detection_pass__finished_at__isnull=True, run__detection_pass__isnull=False).order_by("created_at").values_list("run_id", flat=True)[:limit]]
    delivery_ids = list(Delivery.objects.filter(status=Delivery.Status.PENDING, created_at__lt=before, attempts__isnull=True)
                        .order_by("created_at").values_list("id", flat=True)[:limit])
    return {
        "plans": sum(send_logged(lambda r=r: plan_run.delay(r), what=f"the alerts of run {r}") for r in run_ids),
        "deliveries": sum(send_logged(lambda d=d: send_delivery.delay(d), what=f"delivery {d}") for d in delivery_ids),
    }
