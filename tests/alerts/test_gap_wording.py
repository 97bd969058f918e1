"""An alert about an unbacked/backed gap shows it as the ratio unbacked/backed, in Slack and email
alike (issue #17 item 3), never as "gap minus one" or a percent "vs backed"."""
from __future__ import annotations

import pytest

from dashboard.alerts.compose import message_for_delivery
from dashboard.alerts.models import Delivery, Subscription
from dashboard.results.models import Run
from tests.alerts.history import detect_and_plan
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def test_a_gap_alert_says_unbacked_over_backed_as_a_ratio():
    for day, unbacked in ((1, 1.24), (2, 1.24), (3, 1.05)):
        document = ingest_build(day, [make_result("mlp_loop", "backed", speedup=1.25),
                                      make_result("mlp_loop", "unbacked", speedup=unbacked)])
    Subscription.objects.create(name="slack", channel="slack", target="http://127.0.0.1:9/hook", metrics=["dynamic_gap"])
    Subscription.objects.create(name="mail", channel="email", target="a@bench.test", metrics=["dynamic_gap"])
    detect_and_plan(Run.objects.get(pk=document["run"]["id"]))
    messages = {d.subscription.channel: message_for_delivery(d) for d in Delivery.objects.all()}
    assert set(messages) == {"slack", "email"}

    ratio = "unbacked/backed speedup 0.992 -> 0.840, below 0.95"
    escaped = ratio.replace(">", "&gt;")  # HTML and Slack's mrkdwn alike
    text = messages["email"].text
    # the numbers as every surface shows them (contract.findings): the ratio's own change, signed
    shown_numbers = "0.992× → 0.84× (-15.3 % worse), certain"
    assert ratio in text and shown_numbers in text and escaped in messages["email"].html
    slack = "\n".join(block["text"]["text"] for block in messages["slack"].slack["blocks"] if block["type"] == "section")
    assert escaped in slack and shown_numbers in slack
    for shown in (text, slack):
        assert "vs backed" not in shown and "-16.0%" not in shown and "16.0% worse" not in shown and "-0.16" not in shown
