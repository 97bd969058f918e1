"""Server-rendered pages through Django's test client (no JavaScript needed for the tables)."""
from __future__ import annotations


import re
import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import WORKLOADS, host_environment, make_document, make_result

pytestmark = pytest.mark.django_db


def test_home_without_runs_says_how_to_make_one(client):
    page = client.get("/")
    assert page.status_code == 200
    assert b"No runs yet" in page.content and b"python -m runner run --size tiny" in page.content


def test_home_shows_the_latest_run_per_configuration_and_links_it(client):
    document = make_document()
    document["results"][1]["metrics"]["speedup"] = 0.5
    document["results"][2] = make_result("mlp_loop", "unbacked", status="compile_error", speedup=None)
    run_ingest_and_detect(document=document)

    page = client.get("/")
    html = page.content.decode()

    assert page.status_code == 200
    assert "cpu: build cf30153c4c13" in html and document["run"]["id"] in html
    assert "no earlier build to compare with" in html
    row = html.split("default · unbacked · float32</a>")[1].split("</tr>")[0]
    assert ">50.0%<" in row.replace(" <", "<")  # 1 of 2 unbacked cases passed
    # One build: a trend needs two, so no chart (issue #42: no row of single dots); the page says so.
    assert 'id="trend-single-build"' in html and "a trend needs two" in html
    assert '<a href="/workloads/mlp_loop/">mlp_loop</a>' in html


def test_synthetic_runs_are_labelled(client):
    run_ingest_and_detect(document=make_document(synthetic=True))
    assert b"synthetic demo data" in client.get("/").content


def test_run_page_lists_cases_with_repro_and_escapes_names(client):
    evil = '<script>alert("x")</script>'
    document = make_document(results=[make_result(evil, "static")])
    document["workloads"] = [dict(WORKLOADS[0], name=evil)]
    document["results"][0]["error"] = {"type": "RuntimeError", "message": "<b>boom</b>"}
    run_ingest_and_detect(document=document)

    home = client.get("/").content.decode()
    page = client.get(f"/runs/{document['run']['id']}/").content.decode()

    for html in (home, page):
        assert evil not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;boom&lt;/b&gt;" in page
    assert "python -m runner run --size tiny --workloads" in re.sub(r"</?span>", "", page)  # one span per word


def test_unknown_run_is_404(client):
    assert client.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_plotly_is_served_from_our_static_files(live_server):
    import urllib.request

    with urllib.request.urlopen(f"{live_server.url}/static/vendor/plotly.min.js", timeout=10) as response:
        body = response.read(200)
    assert response.status == 200 and b"plotly" in body.lower()


def test_run_page_marks_a_compiled_side_that_waited_for_the_host(client):
    document = make_document(results=[make_result(w["name"], "static") for w in WORKLOADS[:3]])
    document["results"][0]["environment"] = {"timing": {"host_share": {"eager": 0.62, "compiled": 0.98}}}
    document["results"][1]["environment"] = {"timing": {"host_share": {"eager": 0.30, "compiled": 0.41}}}
    run_ingest_and_detect(document=document)
    page = client.get(f"/runs/{document['run']['id']}/").content.decode()
    assert page.count('class="host-bound"') == 1
    assert "enqueueing took 98% of its device time" in page


def test_run_page_says_when_a_host_bound_case_ran_on_a_slowed_host(client):
    # Two builds of the same series; the second was timed while the host ran its probe twice as
    # slow as on the first: its host-bound case says so, its GPU-bound case does not.
    fast = make_document(results=[make_result(w["name"], "static") for w in WORKLOADS[:2]])
    slow = make_document(git_sha="d" * 40, results=[make_result(w["name"], "static") for w in WORKLOADS[:2]])
    for document, probe_ms in ((fast, 0.9), (slow, 1.8)):
        document["results"][0]["environment"] = host_environment(0.99, probe_ms)
        document["results"][1]["environment"] = host_environment(0.30, probe_ms)
        run_ingest_and_detect(document=document)

    slow_page = client.get(f"/runs/{slow['run']['id']}/").content.decode()
    fast_page = client.get(f"/runs/{fast['run']['id']}/").content.decode()

    assert slow_page.count("host-slowed") == 1 and ">host at 50%<" in slow_page
    assert "in 1.80 ms, at 50% of the speed of this series' fastest run" in slow_page
    assert "host-slowed" not in fast_page and fast_page.count('class="host-bound"') == 1
