"""Write tokens own what they create (issue #46 item 6): a run requested or first posted by one token
takes documents and a cancel from that token only; the dashboard's own runs (nightly, a bisection's)
take none through the API; a completed run takes no new results; a bisection is cancelled by the
token that started it. Another token gets 403 naming the field, and nothing is written."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.models import Bisection
from dashboard.results.models import Result, Run
from tests.fixtures.api import fields
from tests.api.test_runs import SHA, register, submit
from tests.bisect.planted import no_broker, plant
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db


@pytest.fixture
def other() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name='other-team')[1]}")
    return client


def _requested(writer) -> str:
    register(writer)
    response = writer.post("/api/v1/runs/", {"build": SHA[:12], "machine_class": "cpu", "size": "tiny", "dispatch": False}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def test_another_token_cannot_cancel_a_run_nor_post_its_document(writer, other):
    run_id = _requested(writer)
    cancel = other.post(f"/api/v1/runs/{run_id}/cancel/")
    assert cancel.status_code == 403 and fields(cancel) == ["run_id"] and "token 'ci'" in cancel.json()["detail"]
    fabricated = submit(other, make_document(run_id=run_id))
    assert fabricated.status_code == 403 and fields(fabricated) == ["run.id"]
    assert Run.objects.get(pk=run_id).status == "pending" and not Result.objects.exists()
    done = submit(writer, make_document(run_id=run_id))
    assert done.status_code == 200, done.json()  # its own token completes it
    assert Run.objects.get(pk=run_id).status == "completed"


def test_a_run_first_posted_by_a_token_is_its_own(writer, other):
    document = make_document()
    assert submit(writer, {**document, "results": document["results"][:3]}, complete="false").status_code == 201
    refused = submit(other, document)
    assert refused.status_code == 403 and fields(refused) == ["run.id"] and Result.objects.count() == 3
    assert submit(writer, document).status_code == 200 and Result.objects.count() == 6


def test_the_dashboards_own_runs_take_no_document_through_the_api(writer):
    document = make_document()
    run_ingest_and_detect(document=document)  # as a worker's document through the broker, or manage.py ingest
    extra = {**document, "results": [*document["results"], make_result("mlp_loop", "static", mode="max-autotune")]}
    refused = submit(writer, extra)
    assert refused.status_code == 403 and fields(refused) == ["run.id"] and "the dashboard" in refused.json()["detail"]
    assert Result.objects.count() == 6


def test_a_completed_run_takes_no_new_results_but_the_same_document_again(writer):
    document = make_document()
    assert submit(writer, document).status_code == 201
    assert submit(writer, document).status_code == 200  # idempotent, as before
    extra = {**document, "results": [*document["results"], make_result("mlp_loop", "static", mode="max-autotune")]}
    appended = submit(writer, extra)
    assert appended.status_code == 409 and fields(appended) == ["run.id"] and "final" in appended.json()["detail"]
    assert Result.objects.count() == 6


def test_a_bisection_is_cancelled_by_the_token_that_started_it(writer, other, monkeypatch):
    no_broker(monkeypatch)
    regression = plant()
    url = f"/api/v1/regressions/{regression.id}/bisect/"
    assert writer.post(url, {}, format="json").status_code == 201
    refused = other.delete(url)
    assert refused.status_code == 403 and fields(refused) == ["regression_id"]
    assert Bisection.objects.get().status == "running"
    assert writer.delete(url).status_code == 200 and Bisection.objects.get().status == "cancelled"
