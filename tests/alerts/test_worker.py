"""The Celery path: a real worker process on the analysis and alerts queues, Redis, PostgreSQL, a
real SMTP server and a Slack stand-in on loopback. An ingest enqueues detection, detection enqueues
the run's alerts, a failing webhook is retried by the worker, and each message arrives once."""
from __future__ import annotations

import random

import pytest

from dashboard.alerts.models import Delivery, Subscription
from dashboard.alerts.tasks import plan_run, send_delivery
from dashboard.pipeline.tasks import detect_run
from tests.dashboard.page_history import ingest_build
from tests.fixtures.alerts import wait_for
from tests.regressions.history import case

ROOT = __file__.rsplit("/tests/", 1)[0]
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_worker_alerts_once_per_run_and_retries_a_failing_webhook(alerts_worker, smtp_server, slack_server):
    slack = slack_server(["500"])
    Subscription.objects.create(name="oncall slack", channel="slack", target=slack.url, severity="breakage")
    Subscription.objects.create(name="oncall mail", channel="email", target="oncall@bench.test")
    alerts_worker(PTBENCH_BASE_URL="https://bench.test", ALERTS_RETRY_COUNTDOWNS_S="0.5,0.5", ALERTS_HTTP_TIMEOUT_S="2",
                  EMAIL_HOST="127.0.0.1", EMAIL_PORT=str(smtp_server.port), DEFAULT_FROM_EMAIL="ptbench@bench.test")

    rng = random.Random(5)
    ingest_build(1, [case(1.25, rng=rng)])
    failing = case(1.25, rng=rng)
    failing.update(status="compile_error", error={"type": "InductorError", "message": "LoweringException: boom"})
    run_id = ingest_build(2, [failing])["run"]["id"]  # detection, then alerts, follow on the worker

    assert wait_for(lambda: Delivery.objects.filter(status="sent").count() == 2)
    slack_delivery = Delivery.objects.get(subscription__channel="slack")
    assert list(slack_delivery.attempts.values_list("outcome", "http_status")) == [("http_error", 500), ("sent", None)]
    assert str(slack_delivery.run_id) == run_id and slack_delivery.regressions.get().finding == "started_failing"
    assert len(slack.received) == 2 and len(slack.delivered) == 1
    assert "started failing: pass -&gt; compile_error: InductorError: LoweringException: boom" in slack.delivered[0]["blocks"][3]["text"]["text"]
    [mail] = smtp_server.messages
    assert mail["Subject"] == "[ptbench] 1 new regression on cpu: nightly 2 (0002aaaaaaaa)"
    assert "https://bench.test/compare/?base=0001aaaaaaaa&head=0002aaaaaaaa&machine=cpu" in mail.get_body(("plain",)).get_content()

    # Detection again, a redelivered planning task and a redelivered sending task: nothing new goes out.
    assert detect_run.apply_async(args=[run_id]).get(timeout=60)["created"] == []
    assert plan_run.apply_async(args=[run_id]).get(timeout=60) == []
    assert send_delivery.apply_async(args=[slack_delivery.id]).get(timeout=60) == "sent"
    assert Delivery.objects.count() == 2 and len(slack.delivered) == 1 and len(smtp_server.messages) == 1
    assert slack_delivery.attempts.count() == 2
