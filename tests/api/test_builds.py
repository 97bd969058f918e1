"""Builds: register (idempotent), list with filters and pages, one build by its reference."""
from __future__ import annotations

import json

import pytest

from dashboard.results.models import Build
from tests.fixtures.api import fields
from tests.dashboard.page_history import ingest_build, ref_for_day, sha_for

pytestmark = pytest.mark.django_db
SHA = "70d99e998b49c0ffee0123456789abcdef012345"


def test_register_round_trip_and_idempotence(writer, api):
    body = {"torch_version": "2.12.0.dev20261121+cu130", "git_sha": SHA, "local_label": "cu130", "label": "nightly 11-21",
            "commit_time": "2026-11-21T02:00:00Z", "cuda_version": "13.0", "environment": {"flags": ["-O3"]}}
    first = writer.post("/api/v1/builds/", body, format="json")
    assert first.status_code == 201, first.json()
    data = first.json()
    assert data["ref"] == "70d99e998b49+cu130" and data["label"] == "nightly 11-21" and data["environment"] == {"flags": ["-O3"]}
    assert data["commit_time"] == data["ordered_at"] == "2026-11-21T02:00:00Z" and data["machine_classes"] == []
    again = writer.post("/api/v1/builds/", body, format="json")
    assert again.status_code == 200 and again.json()["ref"] == data["ref"] and Build.objects.count() == 1
    # Readable by its reference, or any unique sha prefix of 7+ digits with or without its label.
    for ref in ("70d99e998b49+cu130", "70d99e9+cu130", f"{SHA}+cu130", "70d99e9", SHA):
        assert api.get(f"/api/v1/builds/{ref}/").json()["git_sha"] == SHA
    missing = api.get("/api/v1/builds/70d99e9+cpu/")  # that sha has no +cpu build
    assert missing.status_code == 404 and fields(missing) == ["ref"]
    assert "did you mean 70d99e998b49+cu130?" in missing.json()["detail"]


def test_a_sha_stored_with_another_torch_version_is_refused(writer):
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": SHA}, format="json")
    response = writer.post("/api/v1/builds/", {"torch_version": "2.14.0", "git_sha": SHA}, format="json")
    assert response.status_code == 400 and fields(response) == ["torch_version"] and "local_label" in response.json()["detail"]


@pytest.mark.parametrize("body, bad", [
    ({"torch_version": "2.13.0", "git_sha": "XYZ"}, ["git_sha"]),
    ({"git_sha": SHA}, ["torch_version"]),
    ({"torch_version": "2.13.0", "git_sha": SHA, "commit_time": "yesterday"}, ["commit_time"]),
    ({"torch_version": "x" * 65, "git_sha": SHA, "environment": []}, ["torch_version", "environment"]),
    ({"torch_version": "2.13.0", "git_sha": SHA, "local_label": "a/b"}, ["local_label"]),
    ({"torch_version": "2.13.0", "git_sha": 1234567}, ["git_sha"]),  # a number is not a sha (was stored as text)
    ({"torch_version": 2.13, "git_sha": SHA, "label": ["x"]}, ["torch_version", "label"]),
    ({"torch_version": "2.13.0", "git_sha": SHA, "environment": {"a\x00": 1}}, ["environment"]),  # PostgreSQL cannot store it
    ({"torch_version": "2.13.0", "git_sha": SHA, "environment": {"a": ["\ud800"]}}, ["environment.a[0]"]),
    ({"torch_version": "2.13.0", "git_sha": SHA, "environment": {"a": float("inf")}}, ["body"]),  # Infinity: not JSON
    (["not", "an", "object"], ["body"]),
])
def test_bad_bodies_name_every_field_and_store_nothing(writer, body, bad):
    response = writer.post("/api/v1/builds/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and sorted(fields(response)) == sorted(bad)
    assert Build.objects.count() == 0


def test_a_number_json_cannot_carry_back_is_refused(writer):
    raw = '{"torch_version": "2.13.0", "git_sha": "%s", "environment": {"a": 1e999}}' % SHA  # parses as infinity
    response = writer.post("/api/v1/builds/", raw, content_type="application/json")
    assert response.status_code == 400 and fields(response) == ["environment.a"] and Build.objects.count() == 0


def test_not_json_is_refused_naming_the_body_or_the_content_type(writer):
    response = writer.post("/api/v1/builds/", "{not json", content_type="application/json")
    assert response.status_code == 400 and fields(response) == ["body"]
    response = writer.post("/api/v1/builds/", "torch_version=1", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415 and fields(response) == ["Content-Type"]


def test_a_body_over_the_limit_is_refused_with_413(writer, settings):
    settings.API_MAX_REQUEST_BYTES = 200
    response = writer.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": SHA, "label": "x" * 300}, format="json")
    assert response.status_code == 413 and fields(response) == ["body"]


def test_list_filters_and_pages(api):
    for day in (1, 2, 3):
        ingest_build(day)
    ingest_build(4, machine_class="gpu-h100")
    all_builds = api.get("/api/v1/builds/").json()
    assert all_builds["count"] == 4 and [b["ref"] for b in all_builds["results"]] == [ref_for_day(d) for d in (4, 3, 2, 1)]
    assert all_builds["results"][0]["machine_classes"] == ["gpu-h100"]
    assert [b["ref"] for b in api.get("/api/v1/builds/?machine_class=gpu-h100").json()["results"]] == [ref_for_day(4)]
    assert api.get(f"/api/v1/builds/?git_sha={sha_for(2)[:6]}").json()["count"] == 1
    assert api.get("/api/v1/builds/?since=2026-11-02T00:00:00Z&until=2026-11-03T00:00:00Z").json()["count"] == 2
    page = api.get("/api/v1/builds/?page_size=3&page=2").json()
    assert page["count"] == 4 and [b["ref"] for b in page["results"]] == [ref_for_day(1)] and page["next"] is None
    assert "page=1" in page["previous"] or "page=" not in page["previous"]


@pytest.mark.parametrize("params, field, status", [
    ("page_size=100000", "page_size", 400),
    ("page_size=0", "page_size", 400),
    ("page_size=ten", "page_size", 400),
    ("page=99", "page", 404),
    ("page=0", "page", 400),
    ("machine_class=GPU H100", "machine_class", 400),
    ("since=yesterday", "since", 400),
    ("colour=red", "colour", 400),
    ("git_sha=1&git_sha=2", "git_sha", 400),
])
def test_bad_list_parameters_are_named(api, params, field, status):
    ingest_build(1)
    response = api.get(f"/api/v1/builds/?{params}")
    assert response.status_code == status and fields(response) == [field], response.json()


def test_unknown_paths_answer_json(api):
    response = api.get("/api/v1/nothing-here/")
    assert response.status_code == 404 and fields(response) == ["path"]
    assert "end with '/'" in api.get("/api/v1/builds").json()["detail"]
