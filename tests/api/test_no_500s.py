"""#19 item 5: what used to answer 500 answers 4xx naming the field (or 503 when the database is
down): JSON nested past the recursion limit, integers past the digit limit, a NUL in a read
parameter, a comparison whose relative change is infinite."""
from __future__ import annotations

import importlib

import pytest
from django.db import OperationalError
from django.test import Client

from contract.values import METRIC_BOUNDS
from dashboard.api import selectors
from tests.fixtures.api import fields
from tests.dashboard.page_history import ingest_build, sha_for
from tests.documents import make_result

pytestmark = pytest.mark.django_db

WRITES = ["/api/v1/builds/", "/api/v1/runs/", "/api/v1/runs/submit/", "/api/v1/regressions/triage/"]
DEEP = "[" * 100_000 + "]" * 100_000
LONG_INTEGER = '{"schema_version": ' + "1" * 5000 + "}"


@pytest.mark.parametrize("url", WRITES)
@pytest.mark.parametrize("raw", [DEEP, LONG_INTEGER], ids=["deep", "long_integer"])
def test_unreadable_json_is_400_naming_the_body(writer, url, raw):
    response = writer.post(url, raw, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert fields(response) == ["body"]


@pytest.mark.parametrize("url, field", [("/regressions/?workload=a%00b", "workload"), ("/workloads/a%00b/", "path"),
                                        ("/api/v1/series/a%00b/", "path")])
def test_a_nul_in_a_read_parameter_is_400(url, field):
    response = Client().get(url)
    assert response.status_code == 400
    assert field in response.content.decode()


def test_an_infinite_change_is_answered_in_json(api):
    ingest_build(1, [make_result(compiled_latency_ms=1e-300)])
    ingest_build(2, [make_result(compiled_latency_ms=METRIC_BOUNDS["compiled_latency_ms"])])  # 1e309 times the old
    response = api.get(f"/api/v1/compare/?base={sha_for(1)[:12]}&head={sha_for(2)[:12]}")
    assert response.status_code == 200, response.content[:300]
    row = response.json()["results"][0]
    assert row["changes"]["compiled_latency_ms"]["change"] is None


def test_the_database_down_is_503_with_retry_after(api, monkeypatch):
    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(selectors, "run_list", down)
    monkeypatch.setattr(importlib.import_module("dashboard.web.views.overview"), "machine_class_list", down)
    for response in (api.get("/api/v1/runs/"), Client(raise_request_exception=False).get("/")):
        assert response.status_code == 503 and response["Retry-After"] == "30"
    assert api.get("/api/v1/runs/").json()["errors"][0]["field"] is None


@pytest.mark.parametrize("query, field", [("workload=%25ff", "workload"), ("machine_class=a%25sb", "machine_class")])
def test_a_percent_sign_in_a_read_parameter_is_400_naming_it(api, query, field):
    """bench/hostile_probe.py: django-filter formats each error message with %, so a '%' the client
    sent, quoted in the message, was a 500 (``/api/v1/regressions/?workload=%ff``)."""
    response = api.get(f"/api/v1/regressions/?{query}")
    assert response.status_code == 400 and fields(response) == [field], response.content[:300]
    assert "%" in response.json()["detail"]
