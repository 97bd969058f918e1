"""The message of a delivery: subject, plain text and HTML for email, Block Kit with a fallback
``text`` for Slack. Links are absolute (``PTBENCH_BASE_URL``): the run's compare page, each
workload's page at the regressed configuration, the regressions page for the build, and the suspect
commit range on GitHub when both builds carry real git shas."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.template.loader import render_to_string
from django.urls import reverse

from contract.facts import FindingDetails
from dashboard.alerts.compose_bisection import bisection_message
from dashboard.alerts.compose_intake import intake_message
from dashboard.alerts.formats import Message, absolute, commits_url, labelled, slack_escape, slack_link
from dashboard.alerts.matching import severity_of
from dashboard.alerts.models import Delivery, Subscription
from dashboard.regressions.board import regression_numbers
from dashboard.regressions.models import AlertSummary, Regression
from dashboard.regressions.selectors.commits import commit_ranges_of_rows, commit_summary, culprit_commit_text
from dashboard.results.models import Build, Run
from dashboard.results.selectors.common import build_ref

MAX_LISTED = 25  # regressions spelled out in one message; the rest are counted, with a link to all


@dataclass
class Item:
    """One regression, as every format shows it."""

    workload: str
    config: str
    metric: str
    finding: str
    severity: str
    message: str
    change: str  # "1.249× → 1.099× (-12.0 % worse, noise ± 0.4 %), confidence 0.999" (contract.findings), or ""
    reason: str  # the first new reason's first line, unless the message says it already
    cause: str  # the likeliest cause (docs/explain.md), or ""
    workload_url: str
    compare_url: str | None = None  # only when its builds differ from the run's
    commits_url: str | None = None
    commit_range: str = ""  # "12 commits: 1 touching C++, 10 only Python under torch/ (_dynamo 4, ...)" (issue #41), or ""
    culprit: str = ""  # the culprit commit a bisection named, with the values on both sides, or ""


@dataclass
class RunAlert:
    subject: str
    headline: str
    build: str
    previous: str | None
    compare_url: str | None
    commits_url: str | None
    regressions_url: str
    items: list[Item] = field(default_factory=list)
    more: int = 0


def compare_url(base: Build | None, head: Build, machine_class: str) -> str | None:
    if base is None:
        return None
    return absolute(reverse("web:compare"), {"base": build_ref(base), "head": build_ref(head), "machine": machine_class})


def message_for_delivery(delivery: Delivery) -> Message:
    if delivery.kind == Delivery.Kind.TEST:
        return test_message(subscription=delivery.subscription)
    if delivery.kind == Delivery.Kind.BISECTION:
        return bisection_message(bisection=delivery.bisection, subscription=delivery.subscription)
    if delivery.kind == Delivery.Kind.INTAKE:
        return intake_message(intake=delivery.intake, subscription=delivery.subscription)
    regressions = list(delivery.regressions.select_related(
        "series__workload", "series__config", "first_bad_build", "last_good_build"))
    return run_message(run=delivery.run, regressions=regressions, subscription=delivery.subscription)


def run_message(*, run: Run, regressions: list[Regression], subscription: Subscription) -> Message:
    alert = _run_alert(run=run, regressions=regressions)
    context = {"alert": alert, "subscription": subscription, "alerts_url": absolute(reverse("alerts:page"))}
    return Message(subject=alert.subject, text=_run_text(alert, subscription), html=render_to_string("alerts/email.html", context),
                   slack=_run_slack(alert, subscription))


def _run_alert(*, run: Run, regressions: list[Regression]) -> RunAlert:
    machine_class = run.machine.machine_class
    summary = AlertSummary.objects.filter(run=run).select_related("previous_build").first()
    previous = summary.previous_build if summary else None
    ordered = sorted(regressions, key=lambda r: (severity_of(r.finding) != "breakage", -abs(r.magnitude or 0), r.id))
    ranges = commit_ranges_of_rows(ordered[:MAX_LISTED])
    items = [_item(r, run=run, previous=previous, commit_range=ranges.get((r.last_good_build_id, r.first_bad_build_id)))
             for r in ordered[:MAX_LISTED]]
    count = len(regressions)
    noun = f"{count} new regression{'s' if count != 1 else ''}"
    return RunAlert(
        subject=f"[ptbench] {noun} on {machine_class}: {run.build} ({build_ref(run.build)})",
        headline=f"{noun} on {machine_class} in build {build_ref(run.build)} ({run.build}, size {run.size})",
        build=build_ref(run.build), previous=build_ref(previous) if previous else None,
        compare_url=compare_url(previous, run.build, machine_class), commits_url=commits_url(previous, run.build),
        regressions_url=absolute(reverse("regressions:list"), {"build": build_ref(run.build), "machine": machine_class}),
        items=items, more=count - len(items),
    )


def _item(regression: Regression, *, run: Run, previous: Build | None, commit_range=None) -> Item:
    series, config = regression.series, regression.series.config
    good, bad = regression.last_good_build, regression.first_bad_build
    own_range = (good and good.id, bad.id) != (previous and previous.id, run.build_id)
    details = FindingDetails(regression.details)
    reason = _first_line((details.get("reasons") or [""])[0])
    return Item(
        workload=series.workload.name, config=str(config), metric=regression.metric,
        finding=regression.get_finding_display(), severity=severity_of(regression.finding), message=regression.message,
        change=regression_numbers(regression).text, reason="" if reason in regression.message else reason,
        cause=(details.get("cause") or {}).get("text", ""),
        workload_url=absolute(reverse("web:workload", args=[series.workload.name]), {
            "machine": series.machine_class, **config.case_config.page_parameters()}),
        compare_url=compare_url(good, bad, series.machine_class) if own_range else None,
        commits_url=commits_url(good, bad) if own_range else None,
        commit_range=(commit_summary(commit_range) or {}).get("text", ""), culprit=culprit_commit_text(regression.culprit_commit),
    )


def _first_line(text, limit: int = 300) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")[:limit]


def _run_text(alert: RunAlert, subscription: Subscription) -> str:
    lines = [alert.headline + ".", "", *labelled((
        ("Previous build on this machine class", alert.previous), ("Compare", alert.compare_url),
        ("Suspect commits", alert.commits_url), ("All findings of this build", alert.regressions_url))), ""]
    for item in alert.items:
        lines.append(f"- [{item.severity}] {item.workload} {item.config}: {item.metric}, {item.finding}")
        lines += [f"    {detail}" for detail in (item.cause and f"likeliest cause: {item.cause}", item.change, item.message,
                                                     item.reason and f"reason: {item.reason}", item.commit_range, item.culprit) if detail]
        lines += labelled((("workload", item.workload_url), ("compare", item.compare_url), ("commits", item.commits_url)), indent="    ")
    if alert.more:
        lines.append(f"... and {alert.more} more: {alert.regressions_url}")
    lines += ["", f"You get this through the ptbench subscription {subscription.name!r}: {absolute(reverse('alerts:page'))}"]
    return "\n".join(lines) + "\n"


def _run_slack(alert: RunAlert, subscription: Subscription) -> dict:
    links = [slack_link(url, label) for url, label in ((alert.compare_url, "compare builds"), (alert.commits_url, "suspect commits"),
                                                   (alert.regressions_url, "all findings")) if url]
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": alert.subject.removeprefix("[ptbench] ")[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": slack_escape(alert.headline) + "\n" + " · ".join(links)}},
        {"type": "divider"},
    ]
    for item in alert.items:
        text = (f"*{slack_link(item.workload_url, item.workload)}* `{slack_escape(item.config)}` · {slack_escape(item.metric)}: "
                f"{slack_escape(item.finding)} _({item.severity})_")
        for detail in (item.change, item.message, item.reason and f"reason: {item.reason}", item.commit_range, item.culprit):
            if detail:
                text += "\n" + slack_escape(detail)
        extra = [slack_link(url, label) for url, label in ((item.compare_url, "compare"), (item.commits_url, "commits")) if url]
        if extra:
            text += "\n" + " · ".join(extra)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}})
    if alert.more:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"... and {alert.more} more: {slack_link(alert.regressions_url, 'all findings')}"}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"ptbench subscription {slack_escape(subscription.name)}"}]})
    fallback = f"{slack_escape(alert.headline)}. {alert.compare_url or alert.regressions_url}"
    return {"text": fallback, "blocks": blocks}


def test_message(*, subscription: Subscription) -> Message:
    page = absolute(reverse("alerts:page"))
    subject = f"[ptbench] test alert for {subscription.name}"
    text = (f"This is a test alert from ptbench for the subscription {subscription.name!r} ({subscription.channel}).\n"
            f"Filters: {filters_summary(subscription)}.\nSubscriptions and deliveries: {page}\n")
    html = render_to_string("alerts/test_email.html", {"subscription": subscription, "filters": filters_summary(subscription), "alerts_url": page})
    slack = {"text": f"ptbench test alert for {slack_escape(subscription.name)}", "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*ptbench test alert* for the subscription *{slack_escape(subscription.name)}*.\n"
                                                                f"Filters: {slack_escape(filters_summary(subscription))}.\n{slack_link(page, 'subscriptions and deliveries')}"}},
    ]}
    return Message(subject=subject, text=text, html=html, slack=slack)


def filters_summary(subscription: Subscription) -> str:
    parts = [f"{label} {', '.join(values)}" for label, values in (
        ("machine classes", subscription.machine_classes), ("workloads", subscription.workloads),
        ("sizes", subscription.sizes), ("metrics", subscription.metrics)) if values]
    if subscription.min_magnitude:
        parts.append(f"changes of at least {subscription.min_magnitude:.1%}")
    parts.append(subscription.get_severity_display())
    return "; ".join(parts)
