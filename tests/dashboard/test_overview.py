"""The overview: per configuration figures of the latest build per machine class, each cell's
change against the previous build over the cases present in both, trends, filters."""
from __future__ import annotations

import json

import pytest
from django.apps import apps

from dashboard.results.models import BuildSummary, Config, ConfigSummary, Series
from dashboard.results.selectors.overview import FIGURES, cell_tone, overview_list
from tests.dashboard.page_history import cases, ingest_build, ref_for_day
from tests.documents import make_result

FIG = {f.key: f for f in FIGURES}


def chart_data(html: str) -> dict:
    return json.loads(html.split('id="chart-data" type="application/json">')[1].split("</script>")[0])


# --- pure: no database -----------------------------------------------------------------------------
def test_cell_tone_follows_each_figures_direction():
    assert cell_tone(FIG["speedup_geomean"], 1.0, 0.9) == (pytest.approx(-0.1), "worse strong")
    assert cell_tone(FIG["speedup_geomean"], 1.0, 1.03)[1] == "better"
    assert cell_tone(FIG["speedup_geomean"], 1.0, 1.01)[1] == ""  # under 2%: noise
    assert cell_tone(FIG["compile_time_cold_mean"], 10.0, 12.0)[1] == "worse strong"  # lower is better
    assert cell_tone(FIG["graph_breaks"], 2, 3) == (1, "worse strong")
    assert cell_tone(FIG["pass_rate"], 1.0, 0.5) == (-0.5, "worse strong")
    assert cell_tone(FIG["pass_rate"], 0.5, 0.5) == (0.0, "")


# --- through the database ------------------------------------------------------------------------------
pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_change_is_computed_over_the_cases_present_in_both_builds():
    ingest_build(1, cases(speedup=2.0))
    # The new build dropped resnet_train (a crash took the run down) and mlp_loop got 10% slower.
    ingest_build(2, [make_result("mlp_loop", r, speedup=1.8, compile_time_cold_s=9.0) for r in ("static", "backed", "unbacked")]
                 + [make_result("resnet_train", "static", status="crash", speedup=None)])

    block = overview_list()[0]
    static = next(r for r in block.rows if r.label == "default · static · float32")
    cells = dict(zip([f.key for f in FIGURES], static.cells))

    assert block.latest.build.git_sha.startswith(ref_for_day(2)) and block.previous.build.git_sha.startswith(ref_for_day(1))
    assert static.cases == 2 and static.common == 2
    assert cells["speedup_geomean"].value == pytest.approx(1.8)  # all passing cases of the new build
    assert (cells["speedup_geomean"].old, cells["speedup_geomean"].new) == (pytest.approx(2.0), pytest.approx(1.8))
    assert cells["speedup_geomean"].tone == "worse strong"
    assert cells["pass_rate"].change == pytest.approx(-0.5) and cells["pass_rate"].tone == "worse strong"
    assert cells["compile_time_cold_mean"].tone == "worse strong"  # 7.5 s -> 9 s
    backed = next(r for r in block.rows if r.label == "default · backed · float32")
    assert backed.cases == 1 and backed.common == 1  # resnet_train backed is in neither comparison nor count


@pytestmark_db
def test_overview_page_colours_cells_and_draws_trends_per_configuration(client):
    ingest_build(1, cases(speedup=2.0))
    ingest_build(2, cases(speedup=1.0))

    html = client.get("/").content.decode()

    row = html.split("default · static · float32</a>")[1].split("</tr>")[0]
    assert "cell worse strong" in row and "-50.0%" in row
    assert f"base={ref_for_day(1)}" in html and f"head={ref_for_day(2)}" in html  # compare link
    data = chart_data(html)
    assert data["kind"] == "trends" and len(data["series"]) == 3  # three configurations
    static = next(i for i, s in enumerate(data["series"]) if s["name"] == "default · static · float32")
    assert [data["refs"][b] for b in data["series"][static]["i"]] == [ref_for_day(1), ref_for_day(2)]
    speedup = next(c for c in data["charts"] if c["id"] == "trend-speedup_geomean")
    assert speedup["y"][static] == [2.0, 1.0]


@pytestmark_db
def test_filters_and_range_are_in_the_url_and_bad_values_are_400(client):
    ingest_build(1, cases())
    ingest_build(2, cases())
    html = client.get("/?regime=unbacked&range=30d").content.decode()
    assert "default · unbacked · float32" in html and "default · static · float32</a>" not in html
    assert len(chart_data(html)["series"]) == 1

    for query, parameter in (("range=2y", "range"), ("mode=turbo", "mode"), ("machine=nope", "machine"), ("range=1y&range=all", "range")):
        page = client.get(f"/?{query}")
        assert page.status_code == 400, query
        assert f'data-parameter="{parameter}"' in page.content.decode()


@pytestmark_db
def test_every_machine_class_gets_its_latest_build():
    ingest_build(1, cases(), machine_class="cpu")
    ingest_build(3, cases(), machine_class="gpu-h100", sha="00ff" + "b" * 36)
    ingest_build(2, cases(), machine_class="cpu")
    blocks = {b.machine_class: b for b in overview_list()}
    assert blocks["cpu"].latest.build.git_sha.startswith(ref_for_day(2))
    assert blocks["gpu-h100"].previous is None
    assert [b.machine_class for b in overview_list()] == ["gpu-h100", "cpu"]  # newest build first


@pytestmark_db
def test_summary_rows_follow_ingest_idempotently_and_count_a_rerun_once():
    document = ingest_build(1, cases(speedup=2.0)[:1])  # a run posted in parts: first one case
    assert BuildSummary.objects.get().cases == 1
    ingest_build(1, cases(speedup=2.0), run_id=document["run"]["id"])  # then whole
    ingest_build(1, cases(speedup=2.0), run_id=document["run"]["id"])  # and again: nothing changes
    summary = BuildSummary.objects.get()
    assert (summary.cases, summary.passed, summary.runs) == (6, 6, 1)
    # A second run of the same build on the same class: each case counts once, the latest run's.
    ingest_build(1, cases(speedup=4.0))
    summary = BuildSummary.objects.get()
    assert (summary.cases, summary.runs) == (6, 2) and summary.speedup_geomean == pytest.approx(4.0)
    static = ConfigSummary.objects.get(config__tags__shape_regime="static")
    assert (static.cases, static.speedup_geomean, static.graph_breaks) == (2, pytest.approx(4.0), 2)


@pytestmark_db
def test_a_build_ingested_late_becomes_the_previous_build_of_the_one_after_it():
    ingest_build(1, cases(speedup=1.0))
    ingest_build(3, cases(speedup=3.0))
    ingest_build(2, cases(speedup=2.0))  # arrives last, belongs in the middle

    by_day = {s.build.git_sha[:12]: s for s in ConfigSummary.objects.filter(config__tags__shape_regime="static").select_related("build")}
    second = by_day[ref_for_day(2)]
    block = overview_list()[0]
    assert block.previous.build_id == second.build_id
    assert (block.rows[0].cells[1].old, block.rows[0].cells[1].new) == (pytest.approx(2.0), pytest.approx(3.0))
    assert block.rows[0].cells[1].change == pytest.approx(0.5)


@pytestmark_db
@pytest.mark.skipif(not apps.is_installed("dashboard.regressions"), reason="the regressions app is not installed yet")
def test_open_regressions_and_markers_come_from_the_regressions_app(client):
    from dashboard.regressions.models import Regression
    from dashboard.regressions.selectors import open_regression_counts

    ingest_build(1, cases())
    ingest_build(2, cases())
    series = Series.objects.get(workload__name="mlp_loop", config__tags__shape_regime="static")
    builds = {b.build.git_sha[:12]: b.build for b in BuildSummary.objects.select_related("build")}
    first_bad = builds[ref_for_day(2)]
    for status, finding in (("untriaged", "change_point"), ("fixed", "status_changed")):
        Regression.objects.create(series=series, metric="speedup", finding=finding, first_bad_build=first_bad,
                                  raised_build=first_bad, last_good_build=builds[ref_for_day(1)],
                                  status=status, kind="regression", magnitude=-0.1)

    block = overview_list(open_regressions=open_regression_counts)[0]
    static = next(r for r in block.rows if r.config == Config.objects.get(tags__shape_regime="static"))
    assert static.open_regressions == 1  # the fixed one is not open
    html = client.get("/workloads/mlp_loop/?mode=default&regime=static&dtype=float32").content.decode()
    speedup = next(c for c in chart_data(html)["charts"] if c["id"] == "series-speedup")
    assert [m["i"] for m in speedup["markers"]] == [1, 1]
