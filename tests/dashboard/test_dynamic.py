"""Backed vs unbacked: the gap per workload and build, its trend, highlights beyond 5%."""
from __future__ import annotations

import json

import pytest

from dashboard.results.models import Build, Result
from dashboard.results.selectors.dynamic import Pair, Side, dynamic_gaps, dynamic_pairs, pairs_geomeans
from tests.dashboard.page_history import ingest_build, ref_for_day
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def pair(workload: str, backed: float, unbacked: float, cold_backed: float = 10.0, cold_unbacked: float = 10.0, status="pass"):
    return [
        make_result(workload, "backed", speedup=backed, compile_time_cold_s=cold_backed),
        make_result(workload, "unbacked", status=status, speedup=unbacked if status == "pass" else None, compile_time_cold_s=cold_unbacked),
    ]


def table_rows(html: str) -> dict[str, str]:
    table = html.split('id="dynamic-table"')[1].split("</table>")[0]
    return {row.split('">', 2)[2].split("</a>")[0]: row for row in table.split("<tr class=")[1:]}


def test_gap_and_compile_ratio_per_workload_with_highlights(client):
    ingest_build(1, pair("mlp_loop", 2.0, 2.0) + pair("resnet_train", 2.0, 2.0))
    ingest_build(2, pair("mlp_loop", 2.0, 1.0, cold_unbacked=12.0) + pair("resnet_train", 2.0, 2.02))

    html = client.get("/dynamic/").content.decode()
    rows = table_rows(html)

    assert f"Build {ref_for_day(2)}" in html
    assert "0.500" in rows["mlp_loop"] and "1.200" in rows["mlp_loop"]
    assert rows["mlp_loop"].startswith('"gap"') and "ratio worse" in rows["mlp_loop"]
    assert rows["resnet_train"].startswith('""') and "1.010" in rows["resnet_train"]  # within 5%: not highlighted
    data = json.loads(html.split('id="chart-data" type="application/json">')[1].split("</script>")[0])
    assert data["refs"] == [ref_for_day(1), ref_for_day(2)] and data["workloads"] == ["mlp_loop", "resnet_train"]
    assert data["z"] == [[1.0, 0.5], [1.0, 1.01]]
    assert data["gap"][0] == 1.0 and data["gap"][1] == pytest.approx((0.5 * 1.01) ** 0.5, rel=1e-3)


def test_a_build_picked_in_the_url_and_a_failed_unbacked_case(client):
    ingest_build(1, pair("mlp_loop", 2.0, 1.5, status="compile_error"))
    ingest_build(2, pair("mlp_loop", 2.0, 2.0))
    html = client.get(f"/dynamic/?build={ref_for_day(1)}").content.decode()
    assert f"Build {ref_for_day(1)}" in html
    assert "compile_error" in table_rows(html)["mlp_loop"]


def test_bad_parameters_are_400(client):
    ingest_build(1, pair("mlp_loop", 2.0, 1.5))
    for query, parameter in (("mode=eager", "mode"), ("dtype=int4", "dtype"), ("build=" + "z" * 201, "build"), ("range=forever", "range")):
        page = client.get(f"/dynamic/?{query}")
        assert page.status_code == 400, query
        assert f'data-parameter="{parameter}"' in page.content.decode()


def test_without_both_regimes_it_says_so(client):
    ingest_build(1, [make_result("mlp_loop", "static")])
    page = client.get("/dynamic/")
    assert page.status_code == 200 and b"No workload was measured both backed and unbacked" in page.content


def direct_pairs(build: Build, mode: str = "default", dtype: str = "float32") -> dict[str, Pair]:
    """The pairs as the page read them from the results before the summary table: per workload and
    regime, the case stored last."""
    pairs: dict[str, Pair] = {}
    for r in (Result.objects.filter(build=build, config__tags__compile_mode=mode, config__tags__dtype=dtype,
                                    config__tags__shape_regime__in=("backed", "unbacked"))
              .select_related("workload", "config").order_by("id")):
        pair = pairs.setdefault(r.workload.name, Pair(r.workload.name))
        setattr(pair, r.config.case_config.shape_regime, Side(r.status, r.speedup, r.compile_time_cold_s, r.graph_break_count, r.recompile_count,
                                                           r.speedup_noise))
    return pairs


def test_the_summary_table_says_what_the_results_say_a_rerun_and_a_late_build_included():
    ingest_build(1, pair("mlp_loop", 2.0, 1.0, cold_unbacked=13.0) + pair("resnet_train", 1.7, 1.69) + pair("bert", 1.2, 0.9),
                 extra_workloads=[{"name": "bert", "phase": "infer"}])
    ingest_build(3, pair("mlp_loop", 2.0, 1.5, status="compile_error") + [make_result("resnet_train", "backed", speedup=1.1)])
    ingest_build(3, pair("mlp_loop", 2.1, 1.9, cold_backed=11.0))  # a re-run: its cases replace the first run's
    ingest_build(2, pair("resnet_train", 1.3, 0.65) + pair("mlp_loop", 1.9, 1.9))  # ingested late

    gaps = dynamic_gaps(machine_class="cpu", mode="default", dtype="float32", since=None)
    assert [b.ref for b in gaps.builds] == [ref_for_day(d) for d in (1, 2, 3)]
    assert gaps.workloads == ["bert", "mlp_loop", "resnet_train"]
    for shown in gaps.builds:
        direct = direct_pairs(Build.objects.get(id=shown.build_id))
        pairs = dynamic_pairs(machine_class="cpu", mode="default", dtype="float32", build_id=shown.build_id)
        assert {p.workload: p for p in pairs} == direct
        assert shown.gaps == {name: p.gap for name, p in direct.items()}
        assert (shown.geomean_gap, shown.geomean_compile_ratio) == pairs_geomeans(list(direct.values()))
    latest = direct_pairs(Build.objects.get(id=gaps.builds[-1].build_id))
    assert latest["mlp_loop"].gap == pytest.approx(1.9 / 2.1) and latest["resnet_train"].unbacked is None


def test_the_compile_time_ratio_is_judged_by_its_series_noise():
    from contract.findings import TWO_RUNS_95  # noqa: PLC0415
    from dashboard.results.selectors.dynamic import Pair, Side  # noqa: PLC0415

    def pair(backed_s: float, unbacked_s: float, band: float | None) -> Pair:
        return Pair("mlp_loop", Side("pass", 1.0, backed_s, 0, 0), Side("pass", 1.0, unbacked_s, 0, 0), compile_band=band)

    # the quick start's cpu class: cold compile sd ~55 % between releases: 13.26 -> 23.09 s is not red
    noisy = pair(13.26, 23.09, TWO_RUNS_95 * 0.55)
    assert (noisy.compile_tone, noisy.compile_quiet, noisy.highlighted) == ("too_noisy", "too noisy to track", False)
    assert pair(13.26, 23.09, TWO_RUNS_95 * 0.05).compile_tone == "worse"  # a quiet series: unbacked compiles slower
    assert pair(20.0, 16.0, TWO_RUNS_95 * 0.05).compile_tone == "better"
    within = pair(10.0, 11.5, TWO_RUNS_95 * 0.10)  # +15 % inside a ±28 % band
    assert (within.compile_tone, within.compile_quiet, within.highlighted) == ("", "within noise", False)
    assert pair(10.0, 11.5, None).compile_tone == "worse"  # no band known: the 5 % threshold alone, as before
