"""The home page a person reads in the morning (#17 item 7): recent runs in the order they were
measured with every machine class, open regressions of the latest build only, no empty chart."""
from __future__ import annotations

import re

import pytest
from django.apps import apps

from dashboard.results.models import BuildSummary, Config, Series
from dashboard.results.selectors.overview import overview_list
from tests.dashboard.page_history import cases, ingest_build, ref_for_day
from tests.dashboard.test_overview import chart_data
from tests.documents import make_document

pytestmark = pytest.mark.django_db


def _recent_rows(html: str) -> list[tuple[str, str]]:
    """(measured, machine class) of each row of the "Recent runs" table, top to bottom."""
    table = html.split("<h2>Recent runs</h2>")[1].split("</table>")[0]
    return re.findall(r'<td><a href="/runs/[^"]+/">([^<]+)</a>.*?</td>\s*<td>[^<]*</td><td>.*?</td><td>([^<]+)</td>', table, re.S)


def test_recent_runs_are_in_measured_order_and_show_every_machine_class(client, settings):
    from dashboard.results.services import run_ingest

    gpu = make_document(git_sha="b" * 40)  # measured first, ingested first: the oldest run
    gpu["machine"].update(machine_class="gpu-h100", hostname="h100-box")
    gpu["run"]["started_at"] = "2026-11-01T05:00:00+00:00"
    run_ingest(document=gpu)
    for day in (20, 3, 12):  # ingested out of order
        ingest_build(day, cases())
    html = client.get("/").content.decode()
    rows = _recent_rows(html)
    assert [when[:10] for when, _ in rows] == ["2026-11-22"] * 3 + ["2026-11-01"]  # make_document's started_at
    assert [machine for _, machine in rows] == ["cpu", "cpu", "cpu", "gpu-h100"]


def test_recent_runs_keep_a_machine_class_whose_runs_are_older_than_the_ten_newest(client):
    from dashboard.results.services import run_ingest

    gpu = make_document(git_sha="b" * 40)
    gpu["machine"].update(machine_class="gpu-h100", hostname="h100-box")
    gpu["run"]["started_at"] = "2026-10-01T05:00:00+00:00"
    run_ingest(document=gpu)
    for day in range(1, 13):
        ingest_build(day, cases())
    rows = _recent_rows(client.get("/").content.decode())
    assert len(rows) == 11 and rows[-1][1] == "gpu-h100"


@pytest.mark.skipif(not apps.is_installed("dashboard.regressions"), reason="the regressions app is not installed")
def test_open_regressions_count_only_the_latest_build(client):
    from dashboard.regressions.models import Regression
    from dashboard.regressions.selectors import open_regression_counts

    for day in (1, 2, 3):
        ingest_build(day, cases())
    Regression.objects.all().delete()
    series = Series.objects.get(workload__name="mlp_loop", config__tags__shape_regime="static")
    builds = {b.build.git_sha[:12]: b.build for b in BuildSummary.objects.select_related("build")}
    for day, metric in ((2, "speedup"), (3, "speedup"), (3, "compile_time_cold_s")):
        Regression.objects.create(series=series, metric=metric, finding="change_point", first_bad_build=builds[ref_for_day(day)],
                                  raised_build=builds[ref_for_day(day)], last_good_build=builds[ref_for_day(day - 1)],
                                  status="untriaged", kind="regression", magnitude=-0.1)
    static = next(r for r in overview_list(open_regressions=open_regression_counts)[0].rows
                  if r.config == Config.objects.get(tags__shape_regime="static"))
    assert static.open_regressions == 2  # the two on build 3, not the one on build 2


def test_a_chart_with_no_figures_is_left_out_with_a_note(client):
    for day in (1, 2):
        ingest_build(day, cases(eager_peak_memory_bytes=None, compiled_peak_memory_bytes=None))
    html = client.get("/").content.decode()
    ids = [c["id"] for c in chart_data(html)["charts"]]
    assert "trend-memory_compression_geomean" not in ids and "trend-speedup_geomean" in ids
    assert "no memory compression figures on cpu in this range" in html

    workload = client.get("/workloads/mlp_loop/?mode=default&regime=static&dtype=float32").content.decode()
    assert "series-memory" not in [c["id"] for c in chart_data(workload)["charts"]]
    assert "no compiled peak memory (MB) figures on cpu in this range" in workload
