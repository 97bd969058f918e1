"""#34: a re-measurement or bisection run's document, sent through the API, raises no finding and
sends no alert; the same document as a nightly does. Real services: the API, a Celery worker process
on the analysis and alerts queues, Redis, PostgreSQL and a Slack stand-in on loopback."""
from __future__ import annotations

import json
import random

import pytest
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create
from dashboard.alerts.models import Delivery, Subscription
from dashboard.regressions.models import AlertSummary, Regression
from tests.fixtures.alerts import wait_for
from tests.dashboard.page_history import WORKLOADS, sha_for
from tests.documents import make_document
from tests.regressions.history import case

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _document(day: int, *, failing: bool, rng, **run_fields) -> dict:
    result = case(1.25, rng=rng)
    if failing:
        result.update(status="compile_error", error={"type": "InductorError", "message": "LoweringException: boom"})
    document = make_document(git_sha=sha_for(day), results=[result], **run_fields)
    document["build"]["commit_time"] = f"2026-11-{day:02d}T00:00:00+00:00"
    document["build"]["label"] = f"nightly {day}"
    document["workloads"] = WORKLOADS
    return document


def _alerts_planned(run_id: str) -> bool:
    return AlertSummary.objects.filter(run_id=run_id, notified_at__isnull=False).exists()


def test_re_measurement_and_bisection_runs_raise_no_finding_and_send_no_alert(alerts_worker, slack_server):
    writer = APIClient()
    writer.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name='ci')[1]}")
    slack = slack_server()
    Subscription.objects.create(name="oncall slack", channel="slack", target=slack.url, severity="breakage")
    alerts_worker(PTBENCH_BASE_URL="https://bench.test", ALERTS_HTTP_TIMEOUT_S="2")
    rng = random.Random(5)

    def submit(document) -> str:
        response = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
        assert response.status_code == 201, response.json()
        return document["run"]["id"]

    first = submit(_document(1, failing=False, rng=rng))
    assert wait_for(lambda: _alerts_planned(first))
    # Build 2 starts failing to compile: measured to re-measure, then to bisect, it is no finding.
    for reason in ("remeasurement", "bisection"):
        run_id = submit(_document(2, failing=True, rng=rng, reason=reason))
        assert wait_for(lambda r=run_id: _alerts_planned(r))
        assert Regression.objects.count() == 0 and Delivery.objects.count() == 0 and slack.received == []
    # The same failing build measured as a nightly: the breakage is found and alerted once.
    nightly = submit(_document(2, failing=True, rng=rng))
    assert wait_for(lambda: Delivery.objects.filter(status="sent").count() == 1)
    assert Regression.objects.get().finding == "started_failing" and str(Delivery.objects.get().run_id) == nightly
    assert len(slack.delivered) == 1
