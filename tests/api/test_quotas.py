"""Quotas per write token (issue #46 item 6: 100 run requests in 4.5 s queued 400 cases, one request
3,480 cases, 15 cancel-and-restart cycles of a bisection 604 runs in 20 s): writes per minute, cases
queued or running, bisections running; each a 429 naming the setting, nothing created."""
from __future__ import annotations

import time
import uuid

import pytest
from django.core.cache import caches
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create
from dashboard.dispatch.models import CaseTask
from dashboard.regressions.models import Bisection
from dashboard.results.models import Run
from tests.fixtures.api import fields
from tests.bisect.planted import no_broker, plant

pytestmark = [pytest.mark.services, pytest.mark.django_db]
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


@pytest.fixture(autouse=True)
def counts():
    caches["throttle"].clear()
    yield
    caches["throttle"].clear()


def client_of(name: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name=name)[1]}")
    return client


def test_writes_per_minute_per_token(writer, settings):
    settings.API_TOKEN_WRITES_PER_MINUTE = 3
    if time.time() % 60 > 55:  # all within one calendar minute
        time.sleep(60 - time.time() % 60 + 0.1)
    cancel = f"/api/v1/runs/{uuid.uuid4()}/cancel/"
    assert [writer.post(cancel).status_code for _ in range(3)] == [404] * 3  # refused writes count too
    refused = writer.post(cancel)
    assert refused.status_code == 429 and fields(refused) == ["Authorization"]
    assert "API_TOKEN_WRITES_PER_MINUTE 3" in refused.json()["detail"] and 1 <= int(refused["Retry-After"]) <= 60
    assert writer.get("/api/v1/runs/").status_code == 200  # reads are not writes
    assert client_of("other").post(cancel).status_code == 404  # another token has its own count


def test_cases_queued_per_token(writer, settings, monkeypatch):
    no_broker(monkeypatch)
    assert writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA}, format="json").status_code == 201
    request = {"build": SHA[:12], "machine_class": "cpu", "size": "tiny", "workloads": ["mlp_loop"], "regimes": ["static", "backed"]}
    first = writer.post("/api/v1/runs/", request, format="json")
    assert first.status_code == 201
    planned = CaseTask.objects.count()
    settings.API_TOKEN_MAX_OPEN_CASES = planned + 1
    refused = writer.post("/api/v1/runs/", request, format="json")
    assert refused.status_code == 429 and fields(refused) == ["workloads"]
    assert "API_TOKEN_MAX_OPEN_CASES" in refused.json()["detail"]
    assert Run.objects.count() == 1 and CaseTask.objects.count() == planned  # nothing created
    assert client_of("other").post("/api/v1/runs/", request, format="json").status_code == 201  # another token's own
    assert writer.post(f"/api/v1/runs/{first.json()['id']}/cancel/").status_code == 200
    assert writer.post("/api/v1/runs/", request, format="json").status_code == 201  # its cases no longer queued


def test_bisections_running_per_token(writer, settings, monkeypatch):
    no_broker(monkeypatch)
    settings.API_TOKEN_MAX_BISECTIONS = 1
    regression = plant()
    other = regression.__class__.objects.get(pk=regression.pk)
    other.pk, other.metric = None, "compile_time_cold_s"
    other.save()
    assert writer.post(f"/api/v1/regressions/{regression.id}/bisect/", {}, format="json").status_code == 201
    refused = writer.post(f"/api/v1/regressions/{other.id}/bisect/", {}, format="json")
    assert refused.status_code == 429 and fields(refused) == ["regression_id"]
    assert "API_TOKEN_MAX_BISECTIONS" in refused.json()["detail"] and Bisection.objects.count() == 1
    assert writer.delete(f"/api/v1/regressions/{regression.id}/bisect/").status_code == 200
    assert writer.post(f"/api/v1/regressions/{other.id}/bisect/", {}, format="json").status_code == 201
