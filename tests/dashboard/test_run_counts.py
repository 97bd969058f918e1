"""A run's result counts stored at ingest (#46 item 13): the home page's recent runs read them instead
of counting each run's results per request; they equal the count, a later document of the run adds
to them, and a run stored without them (before migration results/0025) is counted on the page as before."""
from __future__ import annotations

import re

import pytest

from dashboard.results.models import Result, Run
from dashboard.results.run_counts import run_counts_of, run_counts_recount
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db


def _stored(run_id) -> dict:
    run = Run.objects.get(pk=run_id)
    return {"n": run.result_count, "passed": run.pass_count, "breaks": run.graph_break_total}


def _counted(run_id) -> dict:
    row = run_counts_of(Result.objects.filter(run_id=run_id))[Run.objects.get(pk=run_id).pk]
    return {"n": row["n"], "passed": row["passed"], "breaks": row["breaks"] or 0}


def _recent_row(html: str, run_id: str) -> str:
    """The "Recent runs" row of the run, its cells as shown."""
    table = html.split("<h2>Recent runs</h2>")[1].split("</table>")[0]
    row = re.search(rf'<tr>\s*<td><a href="/runs/{run_id}/">.*?</tr>', table, re.S)
    return re.sub(r"\s+", " ", row.group(0))


def _results(*workloads, failed=()) -> list[dict]:
    return [make_result(w, regime, status="compile_error", speedup=None, compiled_latency_ms=None, graph_break_count=None)
            if (w, regime) in failed else make_result(w, regime, graph_break_count=3)
            for w in workloads for regime in ("static", "backed", "unbacked")]


def test_ingest_stores_counts_equal_to_the_results_and_a_later_document_adds_to_them(client):
    from dashboard.results.services import run_ingest

    doc = make_document(results=_results("mlp_loop", failed={("mlp_loop", "backed")}))
    run_id = doc["run"]["id"]
    run_ingest(document=doc)
    assert _stored(run_id) == _counted(run_id) == {"n": 3, "passed": 2, "breaks": 6}
    run_ingest(document=doc)  # posted again: nothing stored twice, nothing counted twice
    assert _stored(run_id) == {"n": 3, "passed": 2, "breaks": 6}
    later = make_document(run_id=run_id, results=_results("mlp_loop", "resnet_train", failed={("resnet_train", "static")}))
    run_ingest(document=later)  # the same run's next document: its three new results
    assert _stored(run_id) == _counted(run_id) == {"n": 6, "passed": 4, "breaks": 12}
    assert "<td class=\"num\">6</td> <td class=\"num\">67%</td> <td class=\"num\">12</td>" in _recent_row(
        client.get("/").content.decode(), run_id)


def test_a_run_without_stored_counts_is_counted_on_the_page_and_at_its_next_ingest(client):
    from dashboard.results.services import run_ingest

    doc = make_document(results=_results("mlp_loop", "resnet_train", failed={("resnet_train", "unbacked")}))
    run_id = doc["run"]["id"]
    run_ingest(document=doc)
    stored_row = _recent_row(client.get("/").content.decode(), run_id)
    Run.objects.filter(pk=run_id).update(result_count=None, pass_count=None, graph_break_total=None)  # stored before 0024
    assert _recent_row(client.get("/?range=1y").content.decode(), run_id) == stored_row  # counted on request
    later = make_document(run_id=run_id, results=[make_result("mlp_loop", "static", mode="max-autotune", graph_break_count=0)])
    run_ingest(document=later)  # counted whole, the results before included
    assert _stored(run_id) == _counted(run_id) == {"n": 7, "passed": 6, "breaks": 15}
    Run.objects.filter(pk=run_id).update(result_count=None)
    run_counts_recount()  # migration results/0025 and the bench's bulk load
    assert _stored(run_id) == _counted(run_id)
