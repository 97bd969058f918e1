"""Alert subscriptions and what was sent to them (issue #8).

A ``Subscription`` is an email list or a Slack incoming webhook with filters. After detection has run
on a finished run, the run's new regressions are handed out once: each enabled subscription that
wants at least one of them gets one ``Delivery`` (unique per subscription and run, so a redelivered
or concurrent task sends nothing twice), and every try to send it is a ``DeliveryAttempt``.
A test alert is a ``Delivery`` of kind ``test`` without a run. Nothing here has logic in save():
planning and sending are in ``services``.
"""
from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator, validate_email
from django.db import models

from dashboard.alerts.matching import BOTH, BREAKAGE, SLOWDOWN
from dashboard.alerts.transport import webhook_address_problem
from dashboard.regressions.history import TRACKED_METRICS
from dashboard.dispatch.models import Intake
from dashboard.regressions.models import Bisection, Regression
from dashboard.results.models import Run
from contract.vocabulary import MACHINE_CLASS, MACHINE_CLASS_HELP, SIZES

# What Regression.metric holds: the noisy metrics detection tracks, then the deterministic ones.
ALERT_METRICS = [*TRACKED_METRICS, "status", "graph_breaks", "recompiles", "dynamic_gap"]


MAX_FILTER_ITEMS = 200  # names in one filter list (a 2.5 MB workloads list was stored, issue #46)


def _reads_as_a_number(item: str) -> bool:
    try:
        float(item)
    except ValueError:
        return False
    return True


def _string_list(value, *, what: str, pattern: re.Pattern | None = None, allowed: list[str] | None = None) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValidationError(f"a list of {what}")
    if len(value) > MAX_FILTER_ITEMS:
        raise ValidationError(f"{len(value)} {what}; at most {MAX_FILTER_ITEMS}")
    for item in value:
        if len(item) > 200:
            raise ValidationError(f"{item[:40]!r}...: longer than 200 characters")
        if _reads_as_a_number(item):  # NaN, inf, 1e308 were stored as filters that match nothing
            raise ValidationError(f"{item!r} reads as a number, not one of the {what}")
        if pattern is not None and not pattern.fullmatch(item):
            raise ValidationError(f"{item!r} is not a machine class ({MACHINE_CLASS_HELP})")
        if allowed is not None and item not in allowed:
            raise ValidationError(f"{item!r} is not one of {', '.join(allowed)}")


def validate_machine_classes(value) -> None:
    _string_list(value, what="machine classes", pattern=MACHINE_CLASS)


def validate_workloads(value) -> None:
    _string_list(value, what="workload names")


def validate_sizes(value) -> None:
    _string_list(value, what="sizes", allowed=list(SIZES))


validate_suites = validate_sizes  # the name alerts/0001 refers to (the field was ``suites`` before #34)


def validate_metrics(value) -> None:
    _string_list(value, what="metrics", allowed=ALERT_METRICS)


def email_addresses(target: str) -> list[str]:
    return [a.strip() for a in re.split(r"[,;\s]+", target) if a.strip()]


class Subscription(models.Model):
    class Channel(models.TextChoices):
        EMAIL = "email"
        SLACK = "slack", "Slack webhook"

    class Severity(models.TextChoices):
        BOTH = BOTH, "breakage and slowdown"
        BREAKAGE = BREAKAGE, "breakage (new failure, graph break, recompile)"
        SLOWDOWN = SLOWDOWN, "slowdown (a measured metric got worse)"

    name = models.CharField(max_length=200)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    target = models.CharField(
        max_length=1000,
        help_text="email: one or more addresses, comma-separated; Slack: the incoming-webhook URL (a secret: pages mask it)",
    )
    machine_classes = models.JSONField(default=list, blank=True, validators=[validate_machine_classes],
                                       help_text="only these machine classes (empty: all)")
    workloads = models.JSONField(default=list, blank=True, validators=[validate_workloads],
                                 help_text="only these workloads (empty: all)")
    sizes = models.JSONField(default=list, blank=True, validators=[validate_sizes],
                             help_text="only runs of these sizes, tiny or full (empty: all)")
    metrics = models.JSONField(default=list, blank=True, validators=[validate_metrics],
                               help_text="only these metrics (empty: all): names of ALERT_METRICS, which the form lists")
    min_magnitude = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text="only changes at least this large, as a fraction (0.05 = 5%); failures, graph breaks and "
                  "recompiles have no magnitude and always pass",
    )
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.BOTH)
    enabled = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.channel})"

    def clean(self) -> None:
        target = (self.target or "").strip()
        if self.channel == self.Channel.EMAIL:
            addresses = email_addresses(target)
            if not addresses:
                raise ValidationError({"target": "give at least one email address"})
            for address in addresses:
                try:
                    validate_email(address)
                except ValidationError:
                    raise ValidationError({"target": f"{address[:80]!r} is not an email address"}) from None
        elif self.channel == self.Channel.SLACK:
            try:
                URLValidator(schemes=["https", "http"])(target)
            except ValidationError:
                raise ValidationError({"target": "a Slack incoming-webhook URL (https://hooks.slack.com/services/...)"}) from None
            if problem := webhook_address_problem(target, unresolved_ok=True):
                raise ValidationError({"target": problem})


class Delivery(models.Model):
    """One message to one subscription: for a run (its new regressions) or a test."""

    class Kind(models.TextChoices):
        RUN = "run"
        TEST = "test"
        BISECTION = "bisection", "bisection result"
        INTAKE = "intake", "intake failure"

    class Status(models.TextChoices):
        PENDING = "pending"
        RETRYING = "retrying", "failed, will retry"
        SENT = "sent"
        FAILED = "failed"

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, null=True, blank=True, related_name="alert_deliveries")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.RUN)
    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, null=True, blank=True, related_name="alert_deliveries",
                                  help_text="kind bisection: the bisection whose result it sends (docs/bisect.md)")
    intake = models.ForeignKey(Intake, on_delete=models.CASCADE, null=True, blank=True, related_name="alert_deliveries",
                               help_text="kind intake: the failed intake it reports (docs/builds.md)")
    regressions = models.ManyToManyField(Regression, blank=True, related_name="alert_deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One message per subscription per run: a task delivered twice, or two at once, cannot send it again.
            models.UniqueConstraint(fields=["subscription", "run"], condition=models.Q(run__isnull=False),
                                    name="delivery_one_per_subscription_run"),
            # A failed intake goes to each subscription once.
            models.UniqueConstraint(fields=["subscription", "intake"], condition=models.Q(intake__isnull=False),
                                    name="delivery_one_per_subscription_intake"),
            # A bisection's result goes to each subscription once.
            models.UniqueConstraint(fields=["subscription", "bisection"], condition=models.Q(bisection__isnull=False),
                                    name="delivery_one_per_subscription_bisection"),
        ]
        indexes = [
            # /alerts/ and the admin: recent deliveries, newest first.
            models.Index(fields=["-created_at"], name="delivery_newest"),
        ]
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"

    def __str__(self) -> str:
        return f"{self.kind} alert to {self.subscription} ({self.status})"


class DeliveryAttempt(models.Model):
    class Outcome(models.TextChoices):
        SENT = "sent"
        HTTP_ERROR = "http_error", "HTTP error"
        TIMEOUT = "timeout"
        CONNECTION_ERROR = "connection_error", "connection error"
        SMTP_ERROR = "smtp_error", "SMTP error"
        ERROR = "error"

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField(help_text="1 for the first try of this delivery")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    http_status = models.PositiveIntegerField(null=True, blank=True)
    smtp_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    retryable = models.BooleanField(default=False, help_text="a failure worth trying again (5xx, 429, timeout, SMTP 4xx)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="deliveryattempt_unique_number")]
        ordering = ["delivery", "number"]

    def __str__(self) -> str:
        return f"attempt {self.number}: {self.outcome}"
