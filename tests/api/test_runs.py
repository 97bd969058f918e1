"""Runs: request, status and progress, cancel, and submitting results through the ingest service."""
from __future__ import annotations

import json
import uuid

import pytest

from dashboard.results.models import BuildSummary, Machine, Result, Run
from tests.fixtures.api import fields
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def register(writer, sha: str = SHA) -> str:
    return writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": sha}, format="json").json()["ref"]


def submit(client, document, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return client.post(f"/api/v1/runs/submit/?{query}", json.dumps(document), content_type="application/json")


def test_submit_round_trip_is_idempotent(writer, api):
    document = make_document()
    first = submit(writer, document)
    assert first.status_code == 201, first.json()
    data = first.json()
    assert (data["created"], data["results_created"], data["results_skipped"]) == (True, 6, 0)
    assert data["run"]["status"] == "completed" and data["run"]["progress"]["stored"] == 6
    again = submit(writer, document)
    assert again.status_code == 200 and (again.json()["created"], again.json()["results_created"]) == (False, 0)
    assert Result.objects.count() == 6
    run = api.get(f"/api/v1/runs/{document['run']['id']}/").json()
    assert run["build"] == SHA[:12] and run["machine"]["machine_class"] == "cpu" and run["progress"]["by_status"] == {"pass": 6}


def test_a_bad_document_names_every_field_and_stores_nothing(writer):
    document = make_document()
    document["results"][3]["status"] = "exploded"
    document["results"][1]["metrics"]["speedup"] = "fast"
    response = submit(writer, document)
    assert response.status_code == 400
    assert fields(response) == ["results[1].metrics.speedup", "results[3].status"]
    assert Run.objects.count() == 0 and Result.objects.count() == 0


@pytest.mark.parametrize("raw, field", [("{nope", "body"), ("[1, 2]", "body"), ('{"schema_version": 9}', "schema_version")])
def test_not_a_document(writer, raw, field):
    response = writer.post("/api/v1/runs/submit/", raw, content_type="application/json")
    assert response.status_code == 400 and fields(response)[0] == field


def test_text_postgresql_cannot_store_is_refused_naming_the_field(writer):
    document = make_document()
    document["results"][2]["repro"] = "python -m runner\x00"
    document["results"][4]["environment"] = {"gpu": "\udc00"}
    response = submit(writer, document)
    assert response.status_code == 400 and fields(response) == ["results[2].repro", "results[4].environment.gpu"]
    assert Run.objects.count() == 0


def test_numbers_the_database_or_json_cannot_hold_are_refused(writer):
    document = make_document()
    document["machine"]["cpu_count"] = 2**63  # the schema allows it; no integer column holds it
    document["results"][1]["metrics"]["graph_break_count"] = 2**63
    document["results"][2]["samples"]["compiled_ms"] = [float("nan")]
    raw = json.dumps(document).replace('"speedup": 1.25', '"speedup": 1e999', 1)  # parses as infinity
    response = writer.post("/api/v1/runs/submit/", raw, content_type="application/json")
    assert response.status_code == 400 and Run.objects.count() == 0
    assert sorted(fields(response)) == ["machine.cpu_count", "results[0].metrics.speedup", "results[1].metrics.graph_break_count",
                                        "results[2].samples.compiled_ms[0]"]


def test_a_document_over_the_limit_is_413(writer, settings):
    settings.INGEST_MAX_DOCUMENT_BYTES = 1000
    response = submit(writer, make_document())
    assert response.status_code == 413 and fields(response) == ["body"] and Run.objects.count() == 0


def test_submit_needs_a_token_and_json(api, writer):
    assert submit(api, make_document()).status_code == 401
    response = writer.post("/api/v1/runs/submit/", "x", content_type="text/plain")
    assert response.status_code == 415 and fields(response) == ["Content-Type"]


def test_request_then_submit_completes_the_requested_run(writer, api):
    register(writer)
    requested = writer.post("/api/v1/runs/", {"build": SHA[:7], "machine_class": "cpu", "size": "tiny", "cases_expected": 6},
                            format="json")
    assert requested.status_code == 201, requested.json()
    run = requested.json()
    assert (run["status"], run["requested_by"], run["machine"]["hostname"]) == ("pending", "api:ci", "(unassigned)")
    assert run["progress"] == {"stored": 0, "expected": 6, "fraction": 0.0, "failed": 0, "by_status": {}}
    assert BuildSummary.objects.get(build__git_sha=SHA).in_progress  # the pages show it as under way

    # The runner posts half, then the rest, under the requested run's id.
    document = make_document(run_id=run["id"])
    half = {**document, "results": document["results"][:3]}
    partial = submit(writer, half, complete="false")
    assert partial.status_code == 200, partial.json()
    status = api.get(f"/api/v1/runs/{run['id']}/").json()
    assert status["status"] == "running" and status["machine"]["hostname"] == "ci-box"
    assert status["progress"]["stored"] == 3 and status["progress"]["fraction"] == 0.5
    done = submit(writer, document)
    assert done.status_code == 200 and done.json()["results_created"] == 3
    status = api.get(f"/api/v1/runs/{run['id']}/").json()
    assert status["status"] == "completed" and status["finished_at"] and status["progress"]["fraction"] == 1.0
    assert not BuildSummary.objects.get(build__git_sha=SHA).in_progress
    assert Run.objects.count() == 1 and Machine.objects.get(hostname="ci-box").runs.count() == 1


def test_a_requested_run_keeps_its_machine_class_and_build(writer):
    register(writer)
    register(writer, sha="b" * 40)
    run_id = writer.post("/api/v1/runs/", {"build": SHA[:12], "machine_class": "gpu-h100"}, format="json").json()["id"]
    response = submit(writer, make_document(run_id=run_id))  # a cpu document
    assert response.status_code == 400 and fields(response) == ["machine.machine_class"]
    run_id = writer.post("/api/v1/runs/", {"build": "b" * 12, "machine_class": "cpu"}, format="json").json()["id"]
    response = submit(writer, make_document(run_id=run_id))  # another build's document
    assert response.status_code == 400 and fields(response) == ["build"]
    assert Result.objects.count() == 0


def test_cancel(writer, api):
    register(writer)
    run_id = writer.post("/api/v1/runs/", {"build": SHA[:12], "machine_class": "cpu"}, format="json").json()["id"]
    assert api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 401
    cancelled = writer.post(f"/api/v1/runs/{run_id}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled" and "cancelled by api:ci" in cancelled.json()["notes"]
    assert writer.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 200  # idempotent
    finished = make_document()
    submit(writer, finished)
    response = writer.post(f"/api/v1/runs/{finished['run']['id']}/cancel/")
    assert response.status_code == 409 and fields(response) == ["status"]
    missing = writer.post(f"/api/v1/runs/{uuid.uuid4()}/cancel/")
    assert missing.status_code == 404 and fields(missing) == ["run_id"]


@pytest.mark.parametrize("body, bad", [
    ({"build": SHA[:12]}, ["machine_class"]),
    ({"build": "z" * 201, "machine_class": "cpu"}, ["build"]),
    ({"build": SHA[:12], "machine_class": "cpu", "cases_expected": 0}, ["cases_expected"]),
])
def test_bad_run_requests(writer, body, bad):
    register(writer)
    response = writer.post("/api/v1/runs/", body, format="json")
    assert response.status_code == 400 and fields(response) == bad and Run.objects.count() == 0


def test_unknown_build_in_a_request_is_404(writer):
    response = writer.post("/api/v1/runs/", {"build": "1234567", "machine_class": "cpu"}, format="json")
    assert response.status_code == 404 and fields(response) == ["build"]


def test_list_runs_with_filters_and_progress(writer, api):
    submit(writer, make_document())
    other = make_document(git_sha="d" * 40, results=[make_result(status="oom", speedup=None)])
    submit(writer, other)
    runs = api.get("/api/v1/runs/").json()
    assert runs["count"] == 2 and {r["progress"]["stored"] for r in runs["results"]} == {6, 1}
    only = api.get(f"/api/v1/runs/?build={'d' * 12}").json()["results"]
    assert [r["id"] for r in only] == [other["run"]["id"]] and only[0]["progress"]["failed"] == 1
    assert api.get("/api/v1/runs/?status=pending").json()["count"] == 0
    assert fields(api.get("/api/v1/runs/?status=paused")) == ["status"]
    assert api.get(f"/api/v1/runs/{uuid.uuid4()}/").status_code == 404
