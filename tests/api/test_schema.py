"""The OpenAPI schema and docs page, and a fuzz test of every operation generated from the schema
(schemathesis, through the real HTTP stack of a live server): no 5xx on any generated input, and
every response conforms to the schema (status codes, content type, body)."""
from __future__ import annotations

import json
import re

import pytest
import schemathesis
import yaml
from django.contrib.staticfiles import finders
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance

from tests.dashboard.page_history import cases, ingest_build

EXAMPLES_PER_OPERATION = 25


@pytest.mark.django_db
def test_schema_is_openapi_3_and_lists_every_endpoint(api):
    response = api.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.") and schema["info"]["version"] == "1"
    paths = set(schema["paths"])
    assert {"/api/v1/builds/", "/api/v1/runs/", "/api/v1/runs/submit/", "/api/v1/runs/{run_id}/", "/api/v1/runs/{run_id}/cancel/",
            "/api/v1/results/", "/api/v1/series/", "/api/v1/series/{signature}/", "/api/v1/regressions/",
            "/api/v1/regressions/{regression_id}/", "/api/v1/compare/", "/api/v1/verdict/"} <= paths
    submit = schema["paths"]["/api/v1/runs/submit/"]["post"]
    document = submit["requestBody"]["content"]["application/json"]["schema"]
    assert document["properties"]["results"]["items"]["properties"]["status"]["enum"][0] == "pass"  # the run document's schema
    assert submit["security"] == [{"token": []}]
    assert schema["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
    as_yaml = api.get("/api/v1/schema/")  # the default format: the same schema as YAML
    assert as_yaml.status_code == 200 and as_yaml.get("Content-Type", "").startswith("application/vnd.oai.openapi")
    assert yaml.safe_load(as_yaml.content) == schema
    runs = {p["name"]: p for p in schema["paths"]["/api/v1/runs/"]["get"]["parameters"]}  # django-filter's, documented
    assert runs["status"]["schema"]["enum"] == sorted(["pending", "running", "completed", "failed", "cancelled"])
    assert runs["machine_class"]["schema"]["pattern"] and runs["build"]["schema"]["maxLength"] == 160


@pytest.mark.django_db
def test_docs_page_uses_our_own_static_files(client):
    html = client.get("/api/v1/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    # Its own script is a file too (the split view: no inline script, under the pages' CSP, issue #46).
    script = client.get("/api/v1/docs/?script=")
    assert script.status_code == 200 and '"/api/v1/schema/"' in script.content.decode()
    assets = [a for a in assets if a != "/api/v1/docs/?script="]
    assert assets and all(a.startswith("/static/drf_spectacular_sidecar/") for a in assets), assets
    assert "http://" not in html and "https://" not in html  # nothing from a CDN
    assert "<script>" not in html
    for asset in assets:  # collectstatic (WhiteNoise) serves them from our static files
        assert finders.find(asset.removeprefix("/static/")), asset


def operations(schema):
    for result in schema.get_all_operations():
        yield result.ok()


@pytest.mark.services
def test_fuzz_every_operation_from_the_schema(live_server, secret):
    """Every operation with up to EXAMPLES_PER_OPERATION generated requests (deterministic: the
    examples derive from the test, not from a random seed), a token on each so writes get past
    authentication, over a database with two builds in it."""
    ingest_build(1, cases(speedup=1.3))
    ingest_build(2, cases(speedup=1.2))
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/v1/schema/?format=json")
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    failures, tried = {}, []
    for operation in operations(schema):
        tried.append(operation.label)

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
        def fuzz(case):
            case.call_and_validate(headers={"Authorization": f"Token {secret}"}, checks=checks)

        try:
            fuzz()
        except (Exception, BaseExceptionGroup) as error:  # noqa: BLE001 (collected: every operation is tried, all failures shown)
            failures[operation.label] = f"{type(error).__name__}: {str(error)[:3000]}"
    assert len(tried) >= 19, tried
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())
