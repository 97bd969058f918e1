"""#33 item 2: values that used to reach the database (or a page) and answer 500 are refused with a
4xx naming the field, storing nothing, or are shown and summed safely: NUL and lone surrogates in
env, config and labels, 1.7e308 metrics, 900-deep environments, dates past the edges of time."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from contract.document import InvalidDocument
from contract.values import MAX_DEPTH, METRIC_BOUNDS
from dashboard.results.aggregates import mean
from dashboard.results.models import Build, BuildSummary, Result, Run
from tests.fixtures.api import fields
from tests.dashboard.page_history import ingest_build
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def post(client, url: str, body) -> object:
    # json.dumps escapes a lone surrogate as \ud800, as a client would send it (APIClient cannot encode it).
    return client.post(url, json.dumps(body), content_type="application/json")


def register(writer, **extra):
    return post(writer, "/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA, **extra})


def nothing_stored():
    return not Build.objects.exists() and not Run.objects.exists() and not Result.objects.exists()


BAD_TEXT = ["a\u0000b", "a\ud800b"]


@pytest.mark.parametrize("text", BAD_TEXT, ids=["nul", "surrogate"])
@pytest.mark.parametrize("extra, field", [
    ({"env": {"TORCH_X": "{}"}}, "env.TORCH_X"),
    ({"config": {"inductor.max_autotune_gemm_backends": "{}"}}, "config.inductor.max_autotune_gemm_backends"),
    ({"label": "{}"}, "label"),
    ({"triton_version": "{}"}, "triton_version"),
    ({"environment": {"flags": ["{}"]}}, "environment.flags[0]"),
])
def test_bad_text_in_a_build_is_400_naming_it(writer, text, extra, field):
    response = register(writer, **_fill(extra, text))
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/json"
    assert field in fields(response), response.json()
    assert not Build.objects.exists()


def _fill(value, text: str):
    if isinstance(value, dict):
        return {k: _fill(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, text) for v in value]
    return text if value == "{}" else value


@pytest.mark.parametrize("name", ["TORCH_\ud800", "TORCH_\u0000"], ids=["surrogate", "nul"])
def test_a_bad_env_name_is_400_and_the_message_encodes(writer, name):
    """The 400 itself was an HTML 500: its message quoted the name and could not be encoded."""
    for url, body in (("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA, "env": {name: "1"}}),
                      ("/api/v1/runs/", {"build": SHA[:12], "machine_class": "cpu", "env": {name: "1"}})):
        response = post(writer, url, body)
        assert response.status_code in (400, 404), (url, response.content[:300])  # 404: no build for the run yet
        assert response["Content-Type"] == "application/json"
        if url.endswith("builds/"):
            assert fields(response)[0].startswith("env"), response.json()


def test_bad_text_in_a_run_request_is_400(writer):
    assert register(writer).status_code == 201
    for extra, field in (({"env": {"TORCH_X": "a\ud800"}}, "env.TORCH_X"), ({"notes": "a\ud800"}, "notes"),
                         ({"hostname": "a\u0000"}, "hostname")):
        response = post(writer, "/api/v1/runs/", {"build": SHA[:12], "machine_class": "cpu", "dispatch": False, **extra})
        assert response.status_code == 400 and field in fields(response), response.json()
    assert not Run.objects.exists()


def test_an_environment_past_the_nesting_limit_is_400_naming_it(writer):
    deep = inner = {}
    for _ in range(100):  # 900 was 201 under gunicorn; the test client's stack is deeper, its parser stops earlier
        inner["x"] = {}
        inner = inner["x"]
    response = register(writer, environment=deep)
    assert response.status_code == 400, response.content[:300]
    assert fields(response)[0].startswith("environment.x.x") and str(MAX_DEPTH) in response.json()["detail"], response.json()
    assert not Build.objects.exists()
    fine = inner = {}
    for _ in range(MAX_DEPTH - 1):  # the environment and what it holds: MAX_DEPTH objects in all
        inner["x"] = {}
        inner = inner["x"]
    assert register(writer, environment=fine).status_code == 201


def test_a_deep_document_is_400_naming_where(writer):
    document = make_document()
    inner = document["results"][0]["environment"] = {}
    for _ in range(100):
        inner["x"] = {}
        inner = inner["x"]
    response = post(writer, "/api/v1/runs/submit/", document)
    assert response.status_code == 400 and fields(response)[0].startswith("results[0].environment.x")
    assert nothing_stored()


@pytest.mark.parametrize("metric", ["compile_time_cold_s", "compiled_latency_ms", "speedup", "eager_peak_memory_bytes", "recompile_count"])
def test_a_metric_past_its_bound_is_400_naming_it(writer, metric):
    huge = {"eager_peak_memory_bytes": 2**62, "recompile_count": 10**6}.get(metric, 1.7e308)  # each column holds it
    document = make_document(results=[make_result(**{metric: huge}), make_result(regime="backed", **{metric: huge})])
    response = post(writer, "/api/v1/runs/submit/", document)
    assert response.status_code == 400, response.content[:300]
    assert fields(response) == [f"results[0].metrics.{metric}", f"results[1].metrics.{metric}"]
    assert "bound" in response.json()["detail"]
    assert nothing_stored()
    at_bound = make_document(results=[make_result(**{metric: METRIC_BOUNDS[metric]})])
    assert post(writer, "/api/v1/runs/submit/", at_bound).status_code == 201


def test_a_sample_past_its_bound_is_400(writer):
    result = make_result()
    result["samples"]["eager_ms"][1] = 1e300
    response = post(writer, "/api/v1/runs/submit/", make_document(results=[result]))
    assert response.status_code == 400 and fields(response) == ["results[0].samples.eager_ms[1]"]


def test_means_of_values_near_the_float_maximum_do_not_overflow():
    """Rows stored before the bounds (or summed from them) still sum to a finite mean."""
    assert mean([1.7e308, 1.7e308, 1.7e308]) == pytest.approx(1.7e308)
    assert mean([1.0, 2.0]) == 1.5


def test_the_regressions_page_survives_a_huge_value():
    """One document broke /regressions/ for everyone: its suspect's magnitude came back from jsonb as a
    309-digit integer and the ``change`` filter overflowed formatting it. Such a value is refused now;
    one at its bound is stored, summed and shown."""
    for day in range(1, 6):
        ingest_build(day, [make_result(compiled_latency_ms=2.0 + day * 1e-3)])
    with pytest.raises(InvalidDocument) as refused:
        ingest_build(6, [make_result(compiled_latency_ms=1.7e308, compile_time_cold_s=1.7e308)])
    assert sorted(e.field for e in refused.value.errors) == ["results[0].metrics.compile_time_cold_s", "results[0].metrics.compiled_latency_ms"]
    ingest_build(7, [make_result(compiled_latency_ms=METRIC_BOUNDS["compiled_latency_ms"],
                                 compile_time_cold_s=METRIC_BOUNDS["compile_time_cold_s"])])
    client = Client(raise_request_exception=False)
    for query in ("", "?status=open", "?kind=regression", "?metric=compiled_latency_ms"):
        response = client.get(f"/regressions/{query}")
        assert response.status_code == 200, (query, response.status_code)
    assert client.get("/").status_code == 200
    assert BuildSummary.objects.filter(build__git_sha__startswith="0007").exists()


def test_the_change_filter_never_raises():
    from dashboard.web.filters.format import change  # noqa: PLC0415

    assert change(int("1" + "0" * 308)) == "+∞"
    assert change(-int("1" + "0" * 308)) == "−∞"
    assert change(float("nan")) == ""
    assert change(0.031) == "+3.1%" and change(2, "count") == "+2" and change(0.02, "points") == "+2.0 pp"
    assert change(5e300) == "+5e+302%" and change(9999.0) == "+999900.0%" and change(10**4) == "+1e+06%"
    assert change(-0.5) == "-50.0%" and change(123456, "count") == "+123,456" and change(10**7, "count") == "+1e+07"


@pytest.mark.parametrize("param, value", [("since", "0001-01-01T00:00:00+14:00"), ("until", "0001-01-01T00:00:00+14:00"),
                                          ("since", "9999-12-31T23:00:00-14:00"), ("until", "9999-12-31T23:00:00-14:00")])
def test_date_filters_clamp_at_the_edges_of_time(api, param, value):
    ingest_build(1, [make_result()])
    response = api.get("/api/v1/builds/", {param: value})
    assert response.status_code == 200, response.content[:300]
    early = value.startswith("0001")
    # Before all time: since keeps every build, until keeps none; after all time the reverse.
    expected = 1 if (param == "since") == early else 0
    assert response.json()["count"] == expected


def test_a_400_quotes_at_most_a_few_hundred_characters_of_a_huge_input(writer):
    """Issue #46 item 11: a 2.5 MB document's 20,000-entry workloads array (past its 1,000) was answered
    with a 4.9 MB 400 echoing the whole array; 10,000 bad results are answered with every error."""
    document = make_document()
    document["workloads"] = [dict(document["workloads"][0], name=f"w{i:07d}") for i in range(20000)]
    response = post(writer, "/api/v1/runs/submit/", document)
    assert response.status_code == 400 and fields(response) == ["workloads"]
    assert response.json()["detail"] == "20000 items; at most 1000" and len(response.content) < 1000
    document = make_document()
    document["workloads"][0]["description"] = "x" * 500_000  # jsonschema's message starts with the value
    response = post(writer, "/api/v1/runs/submit/", document)
    assert response.status_code == 400 and fields(response) == ["workloads[0].description"]
    assert "more characters left out" in response.json()["detail"] and len(response.content) < 2000
    document = make_document()
    document["results"] = [dict(make_result(), config=dict(make_result()["config"], dtype="bogus")) for _ in range(5000)]
    response = post(writer, "/api/v1/runs/submit/", document)
    errors = response.json()["errors"]
    assert response.status_code == 400 and len(errors) == 101 and errors[-1]["message"].endswith("more errors left out")
    assert nothing_stored()
