"""The message of a bisection's result (docs/bisect.md): what it found, the commits or the override,
and a link to the regression's page; plain text, HTML and Slack like a run's alert."""
from __future__ import annotations

from django.urls import reverse
from django.utils.html import escape

from dashboard.alerts.formats import Message, absolute, commits_url, labelled, slack_escape, slack_link
from dashboard.alerts.models import Subscription
from dashboard.regressions.models import Bisection
from dashboard.regressions.selectors.commits import culprit_commit_text
from dashboard.results.models import Build


def bisection_page(bisection: Bisection) -> str:
    if bisection.regression_id:
        return absolute(reverse("regressions:detail", args=[bisection.regression_id]))
    return absolute(reverse("regressions:list"))


def bisection_message(*, bisection: Bisection, subscription: Subscription) -> Message:
    series = bisection.series
    builds = Build.objects.in_bulk([bisection.builds[bisection.low], bisection.builds[bisection.high]])
    good, bad = builds.get(bisection.builds[bisection.low]), builds.get(bisection.builds[bisection.high])
    what = f"{series.workload.name} {series.config} on {series.machine_class}, {bisection.metric}"
    subject = f"[ptbench] bisection {bisection.get_status_display()}: {what}"
    page = bisection_page(bisection)
    commits = commits_url(good, bad) if bisection.status == Bisection.Status.DONE else None
    message = bisection.result.get("message", "")
    if bisection.kind == Bisection.Kind.COMMITS and (culprit := bisection.result.get("commit")):
        # over commits (issue #41): the culprit with its values on both sides and its link
        message = f"{message}. {culprit_commit_text(culprit)}"
        commits = culprit.get("link") or commits
    text = "\n".join([f"Bisection {bisection.id} of {what}: {bisection.get_status_display()}.", message, "",
                      *labelled((("Regression", page), ("Commits", commits))), "",
                      f"You get this through the ptbench subscription {subscription.name!r}."]) + "\n"
    html = (f"<p>Bisection {bisection.id} of {escape(what)}: <b>{escape(bisection.get_status_display())}</b>.</p>"
            f"<p>{escape(message)}</p><p><a href=\"{escape(page)}\">the regression</a>"
            + (f" · <a href=\"{escape(commits)}\">commits</a>" if commits else "") + "</p>")
    links = " · ".join(slack_link(url, label) for url, label in ((page, "regression"), (commits, "commits")) if url)
    slack = {"text": slack_escape(f"{subject.removeprefix('[ptbench] ')}. {message}"), "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{slack_escape(subject.removeprefix('[ptbench] '))}*\n"
                                                                f"{slack_escape(message)}\n{links}"[:3000]}},
    ]}
    return Message(subject=subject, text=text, html=html, slack=slack)
