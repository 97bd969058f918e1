"""The run-level alert lists each finding's commit range (count, which touch C++, Python by area) and
the culprit commit once a bisection named one (issue #41): email text and HTML, and Slack, to real
servers on loopback."""
from __future__ import annotations

import pytest

from dashboard.alerts.models import Subscription
from dashboard.alerts.services import delivery_send
from dashboard.regressions.models import CommitRange, Regression
from tests.alerts.history import detect_and_plan, slowdown_and_breakage

pytestmark = pytest.mark.django_db
SHA = "1a2b3c4d5e6f" + "0" * 28


def commit(n: int, kind: str, areas=()) -> dict:
    return {"sha": f"{n:040x}", "subject": f"change {n}", "author": "A. Author", "time": "2026-11-27T01:00:00+00:00",
            "kind": kind, "areas": list(areas)}


def test_the_run_alert_lists_the_commit_range_and_the_culprit(smtp_server, slack_server):
    runs = slowdown_and_breakage()
    hook = slack_server()
    Subscription.objects.create(name="mail", channel="email", target="a@bench.test")
    Subscription.objects.create(name="slack", channel="slack", target=hook.url)
    first_ids = detect_and_plan(runs[-1])  # detection found them; the alert is planned, not yet sent
    breakage = Regression.objects.get(finding="started_failing")
    CommitRange.objects.create(good_build=breakage.last_good_build, bad_build=breakage.first_bad_build, machine_class="cpu",
                               status=CommitRange.Status.LISTED, commits=[
                                   commit(1, "python", ["_dynamo"]), commit(2, "cpp"), commit(3, "python", ["_inductor", "_dynamo"]),
                                   commit(4, "none")])
    Regression.objects.filter(pk=breakage.pk).update(culprit_commit={
        "sha": SHA, "subject": "inductor: lower it differently", "author": "B. Author", "before": 0, "after": 1,
        "link": f"https://github.com/pytorch/pytorch/commit/{SHA}"})
    for delivery_id in first_ids:
        assert delivery_send(delivery_id=delivery_id).status == "sent"

    range_text = "4 commits: 1 touching C++, 2 only Python under torch/ (_dynamo 2, _inductor 1), 1 outside the build"
    culprit = f'culprit commit 1a2b3c4d5e6f "inductor: lower it differently" by B. Author (0 before, 1 after) https://github.com/pytorch/pytorch/commit/{SHA}'
    [message] = smtp_server.messages
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    html = message.get_body(("html",)).get_content()
    item = text[text.index("[breakage] resnet_train"):text.index("[slowdown]")]
    assert f"    {range_text}\n" in item and f"    {culprit}\n" in item, item
    assert range_text in html and "inductor: lower it differently" in html
    assert "touching C++" not in text[text.index("[slowdown]"):]  # a finding whose range is not listed says nothing of it
    [payload] = hook.delivered
    breakage_block = next(b["text"]["text"] for b in payload["blocks"] if "resnet_train" in str(b))
    assert range_text in breakage_block and culprit.split(" https://")[0] in breakage_block
