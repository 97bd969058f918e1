"""Bodies sent chunked (Transfer-Encoding: chunked, no Content-Length; #19 item 8): read to their end
where the server de-chunks them (gunicorn: ``wsgi.input_terminated``), else 411 naming the problem;
never read as an empty document. No test starts a real gunicorn, so the test client is given the
environ gunicorn hands Django for such a request: no CONTENT_LENGTH, the de-chunked body as input."""
from __future__ import annotations

import io
import json

import pytest

from dashboard.results.models import Build, Result, Run
from tests.fixtures.api import fields
from tests.documents import make_document

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def post_chunked(client, url: str, body: bytes, *, terminated: bool = True):
    environ = {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(body)}
    if terminated:  # gunicorn: the input ends where the de-chunked body ends
        environ["wsgi.input_terminated"] = True
    return client.generic("POST", url, b"", content_type="application/json", **environ)


def test_a_chunked_run_document_is_read_to_its_end(writer):
    document = make_document()
    response = post_chunked(writer, "/api/v1/runs/submit/", json.dumps(document).encode())
    assert response.status_code == 201, response.json()
    assert Run.objects.filter(id=document["run"]["id"]).exists()
    assert Result.objects.count() == len(document["results"]) > 0


def test_a_chunked_body_parsed_by_the_framework_is_read_too(writer):
    response = post_chunked(writer, "/api/v1/builds/", json.dumps({"torch_version": "2.13.0", "git_sha": SHA}).encode())
    assert response.status_code == 201, response.json()
    assert Build.objects.get().git_sha == SHA


def test_a_chunked_body_the_server_cannot_end_is_411_not_an_empty_document(writer):
    response = post_chunked(writer, "/api/v1/runs/submit/", json.dumps(make_document()).encode(), terminated=False)
    assert response.status_code == 411 and fields(response) == ["Transfer-Encoding"]
    assert "Content-Length" in response.json()["detail"] and Run.objects.count() == 0


def test_a_chunked_body_over_the_limit_is_413(writer, settings):
    settings.INGEST_MAX_DOCUMENT_BYTES = 1000
    response = post_chunked(writer, "/api/v1/runs/submit/", json.dumps(make_document()).encode())
    assert response.status_code == 413 and fields(response) == ["body"] and Run.objects.count() == 0
