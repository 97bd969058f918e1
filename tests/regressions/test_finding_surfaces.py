"""One finding, the same numbers on all five surfaces (#27 item 3): the regressions page, the API,
``python -m runner ci verdict`` (real HTTP to a live server), the page's CSV export and the alert's
email and Slack text, on findings that real detection raised (a speedup drop, the compiled latency
that rose with it, a case that started failing, an unbacked/backed gap that opened)."""
from __future__ import annotations

import csv
import html
import io
import re

import pytest
from django.test import Client

from contract.findings import BETTER, WORSE
from dashboard.alerts.compose import message_for_delivery, slack_escape
from dashboard.alerts.models import Delivery, Subscription
from dashboard.regressions.board import regression_numbers
from dashboard.regressions.models import Regression
from dashboard.results.models import Run
from dashboard.results.selectors.common import build_ref
from runner.ci import main as ci
from tests.alerts.history import detect_and_plan, slowdown_and_breakage
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _page_cells(page: str, regression_id: int) -> tuple[str, str, str]:
    row = re.search(rf'data-id="{regression_id}">.*?<td class="num before-after">(.*?)</td>\s*'
                    r'<td class="num change[^"]*"[^>]*>(.*?)</td>\s*<td class="num confidence"[^>]*>(.*?)</td>', page, re.S)
    assert row, f"no row {regression_id} on the page"
    return tuple(html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in row.groups())


def _subscribe() -> None:
    Subscription.objects.create(name="mail", channel="email", target="a@bench.test")
    Subscription.objects.create(name="slack", channel="slack", target="http://127.0.0.1:9/hook")


def _five_surfaces_agree(live_server, capsys) -> list[Regression]:
    findings = list(Regression.objects.select_related("series__workload", "raised_build", "first_bad_build").order_by("id"))
    assert findings
    client = Client()
    page = client.get("/regressions/?status=all&kind=all").content.decode()
    exported = {int(row["id"]): row for row in csv.DictReader(io.StringIO(
        client.get("/regressions/?status=all&kind=all&format=csv").content.decode()))}
    cli = ""  # each finding in the verdict of the build it was raised at (first bad at 15, raised at 16, say)
    for build in {f.raised_build for f in findings} | {f.first_bad_build for f in findings}:
        # by its ref: a variant's sha is its base build's too (a variant's findings are findings, issue #42)
        assert ci(["verdict", "--url", live_server.url, "--build", build_ref(build), "--timeout", "5"]) == 1
        cli += capsys.readouterr().out
    messages = [(d.subscription.channel, message_for_delivery(d)) for d in Delivery.objects.select_related("subscription")]
    assert {channel for channel, _ in messages} == {"email", "slack"}
    email = "\n".join(m.text for channel, m in messages if channel == "email")
    slack = "\n".join(b["text"]["text"] for channel, m in messages if channel == "slack" for b in m.slack["blocks"]
                      if b["type"] == "section")

    for finding in findings:
        n = regression_numbers(finding)
        # the API: the numbers themselves and the line
        api = client.get(f"/api/v1/regressions/{finding.id}/").json()
        assert (api["before"], api["after"], api["change"], api["direction"], api["noise"], api["confidence"], api["text"]) \
            == (n.before, n.after, n.change, n.direction, n.noise, n.confidence, n.text), api
        # the page: the same values, change (with its noise) and confidence
        assert _page_cells(page, finding.id) == (n.values_text, " ".join(p for p in (n.change_text, n.noise_text) if p),
                                                 n.confidence_text)
        # the CSV: the same numbers and line
        row = exported[finding.id]
        assert (row["text"], row["change_text"], row["confidence_text"]) == (n.text, n.change_text, n.confidence_text)
        assert row["change"] == ("" if n.change is None else str(n.change))
        # the CLI and the alerts print the same line
        assert n.text in cli, cli
        assert n.text in email and slack_escape(n.text) in slack
    return findings


def test_a_slowdown_and_a_breakage_read_the_same_everywhere(live_server, capsys):
    _subscribe()
    for run in slowdown_and_breakage():  # detection and alerts after each run, as in production
        detect_and_plan(run)
    findings = _five_surfaces_agree(live_server, capsys)
    by_metric = {f.metric: regression_numbers(f) for f in findings}
    assert by_metric["speedup"].change < 0 and by_metric["speedup"].direction == WORSE
    # the compiled latency rose: a positive change, and worse (never "-12 %" for a rise)
    assert by_metric["compiled_latency_ms"].change > 0 and by_metric["compiled_latency_ms"].direction == WORSE
    assert by_metric["compiled_latency_ms"].change_text.startswith("+")
    # the breakage: a fact, confidence 1 in the JSON where the page says "certain"
    assert (by_metric["status"].confidence, by_metric["status"].confidence_text) == (1.0, "certain")
    assert WORSE != BETTER


def test_a_gap_reads_as_the_ratio_and_its_own_change_everywhere(live_server, capsys):
    _subscribe()
    for day, unbacked in ((1, 1.24), (2, 1.24), (3, 1.05)):
        document = ingest_build(day, [make_result("mlp_loop", "backed", speedup=1.25),
                                      make_result("mlp_loop", "unbacked", speedup=unbacked)])
    detect_and_plan(Run.objects.get(pk=document["run"]["id"]))
    [gap] = _five_surfaces_agree(live_server, capsys)
    n = regression_numbers(gap)
    # 0.992 -> 0.84: -15.3 % of the ratio (the CLI used to print the stored gap, -16.0 %)
    assert n.change_text == "-15.3 % worse" and n.text == "0.992× → 0.84× (-15.3 % worse), certain"
