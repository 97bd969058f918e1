"""Reads of the alerts app: the /alerts/ page's lists and how a delivery went, in one line."""
from __future__ import annotations

from urllib.parse import urlsplit

from django.db.models import Count, QuerySet

from dashboard.alerts.models import Delivery, Subscription, email_addresses


def subscription_list() -> QuerySet[Subscription]:
    return Subscription.objects.annotate(delivery_count=Count("deliveries")).order_by("name", "id")


def delivery_list_recent(*, limit: int = 50) -> list[Delivery]:
    return list(Delivery.objects.select_related("subscription", "run__build", "run__machine")
                .annotate(attempt_count=Count("attempts", distinct=True), regression_count=Count("regressions", distinct=True))
                .order_by("-created_at", "-id")[:limit])


def target_masked(subscription: Subscription, *, show_addresses: bool) -> str:
    """What a page may show of the target: a webhook URL is a secret (its host only); addresses
    only to signed-in users."""
    if subscription.channel == Subscription.Channel.SLACK:
        return f"{urlsplit(subscription.target).hostname or 'webhook'} webhook"
    addresses = email_addresses(subscription.target)
    return ", ".join(addresses) if show_addresses else f"{len(addresses)} address{'es' if len(addresses) != 1 else ''}"


def delivery_outcome(delivery: Delivery, *, echo_body: bool = True) -> str:
    """``sent to <subscription> in 12 ms`` or ``... failed (timeout): no answer within 10 s``.
    ``echo_body=False`` (the web page's test button): an HTTP error is named by its status alone,
    never with the body the server answered (a webhook must not make the dashboard a fetcher)."""
    attempt = delivery.attempts.order_by("-number").first()
    took = f" in {attempt.duration_ms} ms" if attempt else ""
    if delivery.status == Delivery.Status.SENT:
        return f"{delivery.kind} alert sent to {delivery.subscription}{took}"
    outcome = f" ({attempt.get_outcome_display()})" if attempt else ""
    error = f"HTTP {attempt.http_status}" if attempt and attempt.http_status and not echo_body else delivery.last_error
    return f"{delivery.kind} alert to {delivery.subscription} {delivery.status}{outcome}: {error}"
