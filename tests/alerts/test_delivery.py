"""Alerts end to end in this process: planted regressions, a real SMTP server and a real HTTP server
standing in for Slack on loopback; the Celery tasks run eagerly here (tests/alerts/test_worker.py
runs them in a worker)."""
from __future__ import annotations

import random
import re
from html.parser import HTMLParser

import pytest
from django.db import IntegrityError, transaction

from dashboard.alerts.models import Delivery, DeliveryAttempt, Subscription
from dashboard.alerts.services import delivery_plan_run, delivery_resend, delivery_send
from dashboard.alerts.tasks import send_delivery
from dashboard.regressions.models import AlertSummary, Regression
from dashboard.regressions.services import detection_run, regression_triage
from dashboard.results.models import Run
from tests.alerts.history import detect_and_plan, slowdown_and_breakage
from tests.dashboard.page_history import ingest_build, sha_for
from tests.regressions.history import case, speedup_history

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager(monkeypatch):
    """Tasks run in this process (the broker under scripts/test.sh is for the worker tests)."""
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)


def slack(url: str, **filters) -> Subscription:
    return Subscription.objects.create(name=filters.pop("name", "slack"), channel="slack", target=url, **filters)


class Links(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.hrefs: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def test_the_email_has_both_parts_with_links_and_the_commit_range(smtp_server):
    runs = slowdown_and_breakage()
    subscription = Subscription.objects.create(name="compiler team", channel="email", target="a@bench.test, b@bench.test")
    [delivery_id] = detect_and_plan(runs[-1])
    assert delivery_send(delivery_id=delivery_id).status == "sent"

    [message] = smtp_server.messages
    assert sorted(smtp_server.envelopes[0].rcpt_tos) == ["a@bench.test", "b@bench.test"]
    assert message["From"] == "ptbench@bench.test"
    assert message["Subject"] == "[ptbench] 3 new regressions on cpu: nightly 17 (0011aaaaaaaa)"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    compare = "https://bench.test/compare/?base=0010aaaaaaaa&head=0011aaaaaaaa&machine=cpu"
    run_range = f"https://github.com/pytorch/pytorch/compare/{sha_for(16)}...{sha_for(17)}"
    step_range = f"https://github.com/pytorch/pytorch/compare/{sha_for(14)}...{sha_for(15)}"  # where speedup stepped
    workload = "https://bench.test/workloads/mlp_loop/?machine=cpu&mode=default&regime=static&dtype=float32"
    for link in (compare, run_range, step_range, workload, "https://bench.test/workloads/resnet_train/?machine=cpu&mode=default&regime=static&dtype=float32"):
        assert link in text
        assert link in Links(html).hrefs
    assert "started failing: pass -> compile_error: InductorError: LoweringException: boom" in text
    # contract.findings: the change of the value itself, signed, then worse/better (docs/noise-and-findings.md)
    assert re.search(r"speedup.*\n.*1\.2\d\d× → 1\.(09|10)\d× \(-1[12]\.\d % worse, noise ± \d+\.\d %\), confidence 1\.000", text)
    assert text.index("[breakage] resnet_train") < text.index("[slowdown] mlp_loop")  # breakage first
    assert "You get this through the ptbench subscription 'compiler team'" in text

    delivery = Delivery.objects.get(pk=delivery_id)
    assert delivery.subscription == subscription and delivery.run == runs[-1] and delivery.sent_at is not None
    attempt = delivery.attempts.get()
    assert attempt.outcome == "sent" and attempt.number == 1 and attempt.duration_ms < 5000
    assert Regression.objects.filter(notified_at__isnull=True).count() == 0
    assert AlertSummary.objects.get(run=runs[-1]).notified_at is not None


def test_slack_answers_500_then_recovers_and_exactly_one_message_arrives(slack_server, eager, django_capture_on_commit_callbacks):
    server = slack_server(["500", "500"])
    slack(server.url)
    runs = slowdown_and_breakage()
    detection_run(run_id=runs[-1].id)
    with django_capture_on_commit_callbacks(execute=True):
        [delivery_id] = delivery_plan_run(run_id=runs[-1].id)  # sending is queued once this commits

    assert len(server.received) == 3 and len(server.delivered) == 1
    payload = server.delivered[0]
    assert payload["text"].startswith("3 new regressions on cpu in build 0011aaaaaaaa")
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "divider", "section", "section", "section", "context"]
    assert "<https://bench.test/compare/?base=0010aaaaaaaa&head=0011aaaaaaaa&machine=cpu|compare builds>" in payload["blocks"][1]["text"]["text"]
    assert f"https://github.com/pytorch/pytorch/compare/{sha_for(16)}...{sha_for(17)}" in payload["blocks"][1]["text"]["text"]
    attempts = list(Delivery.objects.get(pk=delivery_id).attempts.values_list("number", "outcome", "http_status", "retryable"))
    assert attempts == [(1, "http_error", 500, True), (2, "http_error", 500, True), (3, "sent", None, False)]
    assert Delivery.objects.get(pk=delivery_id).status == "sent"


def test_a_webhook_that_times_out_is_tried_again(slack_server, eager, settings):
    server = slack_server(["timeout"], hold_s=2.0)
    slack(server.url)
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    assert send_delivery.apply(args=[delivery_id]).get() == "sent"
    first, second = Delivery.objects.get(pk=delivery_id).attempts.all()
    assert (first.outcome, first.retryable, second.outcome) == ("timeout", True, "sent")
    assert first.error == "no answer within 0.5 s" and 400 <= first.duration_ms < 1900
    assert len(server.received) == 2 and len(server.delivered) == 1


def test_retries_are_bounded_and_a_failed_delivery_can_be_sent_again(slack_server, eager, django_capture_on_commit_callbacks):
    server = slack_server(["500", "503", "500"])
    slack(server.url)
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    assert send_delivery.apply(args=[delivery_id]).get() == "failed"  # 1 + len(ALERTS_RETRY_COUNTDOWNS_S) tries
    delivery = Delivery.objects.get(pk=delivery_id)
    assert delivery.attempts.count() == 3 and delivery.last_error == "HTTP 500: internal_error" and not server.delivered

    with django_capture_on_commit_callbacks(execute=True):
        assert delivery_resend(delivery_ids=[delivery_id]) == [delivery_id]
    assert Delivery.objects.get(pk=delivery_id).status == "sent"
    assert len(server.delivered) == 1 and Delivery.objects.get(pk=delivery_id).attempts.count() == 4
    assert delivery_resend(delivery_ids=[delivery_id]) == []  # a sent delivery is not sent again


def test_a_refused_webhook_is_not_retried(slack_server, eager):
    server = slack_server(["404"])
    slack(server.url)
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    assert send_delivery.apply(args=[delivery_id]).get() == "failed"
    attempt = DeliveryAttempt.objects.get(delivery_id=delivery_id)
    assert (attempt.outcome, attempt.http_status, attempt.retryable, attempt.error) == ("http_error", 404, False, "HTTP 404: no_service")


def test_a_refused_mail_recipient_fails_the_delivery_with_the_smtp_reply(smtp_server):
    smtp_server.refuse["gone@bench.test"] = "550 5.1.1 no such user"
    Subscription.objects.create(name="mail", channel="email", target="gone@bench.test")
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    delivery = delivery_send(delivery_id=delivery_id, last_try=False)
    attempt = delivery.attempts.get()
    assert delivery.status == "failed" and (attempt.outcome, attempt.smtp_code, attempt.retryable) == ("smtp_error", 550, False)
    assert "gone@bench.test (550 5.1.1 no such user)" in attempt.error and not smtp_server.messages


def test_rerunning_detection_sends_nothing_new(slack_server, eager, django_capture_on_commit_callbacks):
    """The whole chain as after an ingest: detection, then planning, then sending (each on commit)."""
    from dashboard.pipeline.tasks import detect_run

    server = slack_server()
    slack(server.url)
    runs = slowdown_and_breakage()
    with django_capture_on_commit_callbacks(execute=True):
        detect_run.delay(str(runs[-1].id))
    assert len(server.delivered) == 1 and Delivery.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        for run in runs:
            detect_run.delay(str(run.id))
    assert len(server.delivered) == 1 and Delivery.objects.count() == 1
    assert Regression.objects.filter(kind="regression").count() == 3


def test_a_run_with_nothing_new_sends_nothing(slack_server):
    server = slack_server()
    slack(server.url)
    runs = speedup_history([1.25] * 12, seed=11)
    assert [detect_and_plan(run) for run in runs] == [[]] * 12
    assert not server.received and not Delivery.objects.exists()
    assert all(s.notified_at is not None for s in AlertSummary.objects.all())


def test_improvements_and_triaged_regressions_are_not_sent(slack_server):
    slack("http://127.0.0.1:9/never")
    better = speedup_history([1.25] * 14 + [1.45] * 3)
    assert [detect_and_plan(run) for run in better] == [[]] * 17
    assert Regression.objects.filter(kind="improvement").exists()

    Regression.objects.all().delete()
    Run.objects.all().delete()
    runs = slowdown_and_breakage()
    detection_run(run_id=runs[-1].id)
    failure = Regression.objects.get(finding="started_failing")
    regression_triage(regression_ids=[failure.id], status="acknowledged", user="oncall")
    [delivery_id] = delivery_plan_run(run_id=runs[-1].id)
    assert set(Delivery.objects.get(pk=delivery_id).regressions.values_list("finding", flat=True)) == {"change_point"}
    assert Regression.objects.get(pk=failure.id).notified_at is None


def test_filters_choose_what_each_subscription_gets():
    runs = slowdown_and_breakage()
    url = "http://127.0.0.1:9/hook"
    wants = {
        "everything": {},
        "gpu only": {"machine_classes": ["gpu-h100"]},
        "cpu": {"machine_classes": ["cpu"]},
        "speedup": {"metrics": ["speedup"]},
        "big changes": {"min_magnitude": 0.2},
        "breakage": {"severity": "breakage"},
        "slowdown": {"severity": "slowdown"},
        "resnet": {"workloads": ["resnet_train"]},
        "full size": {"sizes": ["full"]},
        "disabled": {"enabled": False},
    }
    for name, filters in wants.items():
        slack(url, name=name, **filters)
    detect_and_plan(runs[-1])
    got = {d.subscription.name: sorted(f"{r.finding}:{r.metric}" for r in d.regressions.all())
           for d in Delivery.objects.select_related("subscription")}
    slowdowns = ["change_point:compiled_latency_ms", "change_point:speedup"]
    assert got == {
        "everything": sorted(["started_failing:status", *slowdowns]),
        "cpu": sorted(["started_failing:status", *slowdowns]),
        "speedup": ["change_point:speedup"],
        "big changes": ["started_failing:status"],  # 12-14% is short of 20%; a failure has no magnitude
        "breakage": ["started_failing:status"],
        "slowdown": slowdowns,
        "resnet": ["started_failing:status"],
    }


def test_a_run_is_planned_once_and_a_delivery_is_sent_once(slack_server):
    server = slack_server()
    slack(server.url)
    runs = slowdown_and_breakage()
    [delivery_id] = detect_and_plan(runs[-1])
    assert delivery_plan_run(run_id=runs[-1].id) == []  # a redelivered or concurrent planning task
    with pytest.raises(IntegrityError), transaction.atomic():
        Delivery.objects.create(subscription=Subscription.objects.get(), run=runs[-1])
    assert delivery_send(delivery_id=delivery_id).status == "sent"
    assert delivery_send(delivery_id=delivery_id).status == "sent"  # a redelivered sending task
    assert len(server.received) == 1 and DeliveryAttempt.objects.count() == 1


def test_a_finding_that_reaches_an_alerted_run_later_goes_out_with_the_next_run():
    """A re-measurement confirms a suspect on a build whose run was alerted already: the finding
    joins that run's summary, and goes out with the next run on the machine class."""
    slack("http://127.0.0.1:9/hook")
    runs = slowdown_and_breakage()
    detect_and_plan(runs[-1])
    confirmed = Regression.objects.get(finding="change_point", metric="speedup")
    late = Regression.objects.create(
        series=confirmed.series, metric="compile_time_cold_s", finding="change_point", first_bad_build=runs[-1].build,
        last_good_build=runs[-2].build, raised_build=runs[-1].build, summary=confirmed.summary, magnitude=-0.3,
        details={"message": "compile_time_cold_s 7.5 -> 9.8 (+30%), confirmed by re-measurement"})
    other_class = ingest_build(18, [case(1.10, rng=random.Random(3))], machine_class="gpu-h100")
    assert detect_and_plan(Run.objects.get(pk=other_class["run"]["id"])) == []  # another machine class
    nxt = ingest_build(18, [case(1.10, rng=random.Random(3))])
    [delivery_id] = detect_and_plan(Run.objects.get(pk=nxt["run"]["id"]))
    assert list(Delivery.objects.get(pk=delivery_id).regressions.all()) == [late]


def test_a_partial_run_is_alerted_when_it_is_complete():
    slack("http://127.0.0.1:9/hook")
    runs = slowdown_and_breakage()
    Run.objects.filter(pk=runs[-1].pk).update(status="running")
    assert detect_and_plan(runs[-1]) == []
    assert Regression.objects.filter(notified_at__isnull=False).count() == 0
    Run.objects.filter(pk=runs[-1].pk).update(status="completed")
    assert len(detect_and_plan(runs[-1])) == 1


def test_a_retry_handed_out_again_makes_its_try_once(slack_server):
    """A retry waiting past the dashboard's short visibility timeout is handed out again: the copies
    expect the same count of attempts, and only the first to lock the delivery tries."""
    server = slack_server(["500", "500"])
    slack(server.url)
    [delivery_id] = detect_and_plan(slowdown_and_breakage()[-1])
    assert delivery_send(delivery_id=delivery_id, last_try=False).status == "retrying"
    assert delivery_send(delivery_id=delivery_id, last_try=False, attempts_before=1).status == "retrying"
    assert delivery_send(delivery_id=delivery_id, last_try=False, attempts_before=1) is None  # the copy
    assert len(server.received) == 2 and DeliveryAttempt.objects.filter(delivery_id=delivery_id).count() == 2
