"""The tables of each class's latest build, stored (results.services.latest_tables, #46 item 13): a
cold ``/`` over every configuration reads one row per class instead of the build's cases; the stored
tables are the computed ones, tables whose inputs changed (a second run of the head) or a row of
another build are computed again, never served, and a page filtered to some configurations computes
its own from the cases."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.results.models import LatestTables, Run
from dashboard.results.selectors.build_cases import build_cases
from dashboard.results.selectors.builds import build_summary_latest
from dashboard.results.services.latest_tables import latest_tables, latest_tables_refresh, tables_of_cases
from tests.dashboard.page_history import cases, ingest_build
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def computed_now(machine_class: str = "cpu"):
    summary = build_summary_latest(machine_class=machine_class)
    return tables_of_cases(summary=summary, cases=build_cases(build_id=summary.build_id, machine_class=machine_class))


def cold_home(client, url: str = "/") -> tuple[str, list[str]]:
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), [q["sql"] for q in queries.captured_queries]


def reads_cases(sql: list[str]) -> bool:
    """The page read a build's cases (``build_cases``: the only read of results with their workload's phase)."""
    return any('FROM "results_result"' in q and '"results_workload"."phase" AS "workload__phase"' in q for q in sql)


def test_a_cold_home_reads_the_stored_tables_not_the_cases(client):
    ingest_build(1, cases(speedup=2.0))
    failing = [make_result("mlp_loop", "static", status="compile_error", speedup=None, compiled_latency_ms=None),
               *cases(speedup=2.5)[1:]]
    doc = ingest_build(2, failing)
    assert latest_tables_refresh(run_id=doc["run"]["id"]) is True  # the pipeline, after the ingest
    assert latest_tables_refresh(run_id=doc["run"]["id"]) is False  # stored, inputs unchanged
    html, sql = cold_home(client)
    assert not reads_cases(sql), "a cold / read the latest build's cases"
    assert latest_tables(summary=build_summary_latest(machine_class="cpu")) == computed_now()
    assert "6 cases, 5 passed, 1 did not: 1 compile_error" in html
    LatestTables.objects.all().delete()  # none stored: computed from the cases, the same page, then stored
    again, sql = cold_home(client)
    assert reads_cases(sql) and again == html and LatestTables.objects.count() == 1


def test_tables_whose_inputs_changed_or_of_another_build_are_computed_again(client):
    ingest_build(1, cases(speedup=2.0))
    first_run = ingest_build(2, cases(speedup=2.0))["run"]["id"]
    cold_home(client)
    before = LatestTables.objects.get()
    ingest_build(2, cases(speedup=3.0))  # a second run of the head: its counts change, so do the inputs
    html, sql = cold_home(client)
    after = LatestTables.objects.get()
    assert reads_cases(sql) and after.inputs != before.inputs
    assert latest_tables(summary=build_summary_latest(machine_class="cpu")) == computed_now()
    assert computed_now().suites[0].speedup_geomean == pytest.approx(3.0)
    # A row stored for an older build (the latest's counts alike) is not served: the page is the computed one.
    older = Run.objects.get(pk=first_run).build_id - 1
    LatestTables.objects.filter(pk=after.pk).update(build_id=older)
    again, sql = cold_home(client)
    assert reads_cases(sql) and again == html and LatestTables.objects.get().build_id != older


def test_a_filtered_home_computes_its_tables_from_the_cases(client):
    ingest_build(1, cases(speedup=2.0))
    ingest_build(2, cases(speedup=2.0) + [make_result("mlp_loop", "static", mode="max-autotune", speedup=4.0)])
    cold_home(client)
    stored = latest_tables(summary=build_summary_latest(machine_class="cpu"))
    assert [(row.suite, row.cases) for row in stored.training] == [("core", 3)]  # resnet_train x three regimes
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        block = client.get("/?mode=max-autotune").context["blocks"][0]
    assert reads_cases([q["sql"] for q in queries.captured_queries])
    assert block.training == [] and [(row.suite, row.cases, row.speedup_geomean) for row in block.suites] == [("core", 1, 4.0)]
