"""The message of a failed intake (issue #41, docs/builds.md): which class, which version, why, the
installer's last lines, and a link to ``/`` (where the failure shows) and the admin's intake."""
from __future__ import annotations

from django.urls import reverse
from django.utils.html import escape

from dashboard.alerts.formats import Message, absolute, labelled, slack_escape, slack_link
from dashboard.alerts.models import Subscription
from dashboard.dispatch.models import Intake

LOG_LINES = 12


def intake_message(*, intake: Intake, subscription: Subscription) -> Message:
    version = f"torch {intake.version}" if intake.version else "the newest build"
    subject = f"[ptbench] intake failed on {intake.machine_class}: {version}"
    home = absolute(reverse("web:home"))
    detail = absolute(reverse("admin:dispatch_intake_change", args=[intake.id]))
    tail = "\n".join(intake.log.strip().splitlines()[-LOG_LINES:])
    text = "\n".join([f"Intake {intake.id} of {version} on {intake.machine_class} failed"
                      f"{' on ' + intake.hostname if intake.hostname else ''}: {intake.error}", "",
                      *([f"The installer's last lines:\n{tail}", ""] if tail else []),
                      *labelled((("Overview", home), ("Intake", detail))), "",
                      f"You get this through the ptbench subscription {subscription.name!r}."]) + "\n"
    html = (f"<p>Intake {intake.id} of {escape(version)} on <b>{escape(intake.machine_class)}</b> failed: {escape(intake.error)}</p>"
            + (f"<pre>{escape(tail)}</pre>" if tail else "")
            + f"<p><a href=\"{escape(home)}\">overview</a> · <a href=\"{escape(detail)}\">the intake</a></p>")
    slack = {"text": slack_escape(f"{subject.removeprefix('[ptbench] ')}: {intake.error}"), "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": (f"*{slack_escape(subject.removeprefix('[ptbench] '))}*\n"
                                                                 f"{slack_escape(intake.error)}\n"
                                                                 + (f"```{slack_escape(tail)}```\n" if tail else "")
                                                                 + f"{slack_link(home, 'overview')} · {slack_link(detail, 'the intake')}")[:3000]}},
    ]}
    return Message(subject=subject, text=text, html=html, slack=slack)
