"""Results, series and compare: filters, pages, round trips against what was ingested."""
from __future__ import annotations

import math

import pytest

from dashboard.regressions.noise import TWO_RUNS_95
from contract.metrics import BY_NAME as METRIC
from dashboard.results.models import Result, Series
from tests.fixtures.api import fields
from tests.dashboard.page_history import cases, ingest_build, ref_for_day, sha_for
from tests.documents import make_result

pytestmark = pytest.mark.django_db
EXTRA = [{"name": "bert", "phase": "infer"}, {"name": "gone_model", "phase": "infer"}, {"name": "new_model", "phase": "infer"}]


def test_results_filter_by_build_workload_config_class_and_status(api):
    ingest_build(1, cases(speedup=1.5))
    ingest_build(2, cases(speedup=1.4) + [make_result("bert", "static", status="oom", speedup=None)], extra_workloads=EXTRA)
    ingest_build(2, cases(), machine_class="gpu-h100", sha=sha_for(2))
    assert api.get("/api/v1/results/").json()["count"] == 6 + 7 + 6
    day2 = api.get(f"/api/v1/results/?build={ref_for_day(2)}&machine_class=cpu").json()
    assert day2["count"] == 7 and {r["build"] for r in day2["results"]} == {ref_for_day(2)}
    failed = api.get("/api/v1/results/?status=oom").json()["results"]
    assert [(r["workload"], r["status"], r["metrics"]["speedup"]) for r in failed] == [("bert", "oom", None)]
    static_mlp = api.get("/api/v1/results/?workload=mlp_loop&shape_regime=static&compile_mode=default&dtype=float32&device=cpu"
                         "&machine_class=cpu").json()["results"]
    assert [r["metrics"]["speedup"] for r in static_mlp] == [1.5, 1.4]
    result = static_mlp[0]
    stored = Result.objects.get(pk=result["id"])
    assert result["series"] == stored.series.signature and result["run"] == str(stored.run_id)
    assert result["config"] == {"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu"}
    assert result["metrics"]["memory_compression"] == 2.0 and result["graph_breaks"][0]["reason"] == "Tensor.item"
    assert result["repro"].startswith("python -m runner run") and "samples" not in result
    by_series = api.get(f"/api/v1/results/?series={result['series']}").json()
    assert by_series["count"] == 2
    detail = api.get(f"/api/v1/results/{result['id']}/").json()
    assert detail["samples"]["compiled_ms"] == [2.0, 2.1, 1.9]
    assert api.get("/api/v1/results/999999/").status_code == 404


@pytest.mark.parametrize("params, field", [
    ("status=exploded", "status"), ("compile_mode=turbo", "compile_mode"), ("run=not-a-uuid", "run"),
    ("build=" + "x" * 201, "build"), ("series=abc", "series"), ("workload=" + "w" * 201, "workload"), ("workload=a%00b", "workload"),
])
def test_bad_result_filters(api, params, field):
    response = api.get(f"/api/v1/results/?{params}")
    assert response.status_code == 400 and fields(response) == [field], response.json()


@pytest.mark.parametrize("path, params, field", [
    ("results", "colour=red", "colour"), ("results", "status=oom&status=pass", "status"), ("runs", "size=", "size"), ("runs", "suite=tiny", "suite"),
    ("series", "machine_class=GPU!", "machine_class"), ("builds", "since=yesterday", "since"), ("regressions", "kind=worse", "kind"),
    ("builds", "git_sha=xyz", "git_sha"), ("runs", "build=ffffffffffff", "build"),
])
def test_bad_list_filters_name_the_parameter(api, path, params, field):
    """The django-filter FilterSets refuse an unknown, repeated, empty or malformed parameter (a
    build no one has: 404), each naming it."""
    response = api.get(f"/api/v1/{path}/?{params}")
    assert response.status_code in (400, 404) and fields(response) == [field], response.json()


def test_build_filters_by_time_with_any_offset_and_by_empty_local_label(api):
    ingest_build(1, cases())
    assert api.get("/api/v1/builds/?since=1387-09-27T19:24:12.031923-18:48").json()["count"] == 1  # PostgreSQL: offsets <= 15:59
    assert api.get("/api/v1/builds/?until=1387-09-27T19:24:12Z").json()["count"] == 0
    assert api.get("/api/v1/builds/?local_label=").json()["count"] == 1
    assert api.get("/api/v1/builds/?local_label=patched").json()["count"] == 0


def test_results_pages(api):
    ingest_build(1, cases())
    first = api.get("/api/v1/results/?page_size=4").json()
    second = api.get(first["next"]).json()
    assert first["count"] == second["count"] == 6 and len(first["results"]) == 4 and len(second["results"]) == 2
    assert not {r["id"] for r in first["results"]} & {r["id"] for r in second["results"]}


def test_series_list_and_points(api):
    for day, speedup in ((1, 1.5), (2, 1.5), (3, 1.2)):
        ingest_build(day, cases(speedup=speedup, speedup_noise=0.02))
    ingest_build(3, [make_result("mlp_loop", "static", speedup=9.0)], machine_class="gpu-h100", sha=sha_for(3))
    listing = api.get("/api/v1/series/?workload=mlp_loop&shape_regime=static").json()
    assert listing["count"] == 2 and {s["machine_class"] for s in listing["results"]} == {"cpu", "gpu-h100"}
    cpu = next(s for s in listing["results"] if s["machine_class"] == "cpu")
    assert cpu["signature"] == Series.objects.get(machine_class="cpu", workload__name="mlp_loop", config__tags__shape_regime="static").signature
    points = api.get(f"/api/v1/series/{cpu['signature']}/").json()
    assert points["metric"] == {"name": "speedup", "label": "speedup", "unit": "x", "higher_is_better": True}
    assert points["series"]["workload"] == "mlp_loop" and points["count"] == 3
    assert [(p["build"], p["value"]) for p in points["results"]] == [(ref_for_day(1), 1.5), (ref_for_day(2), 1.5), (ref_for_day(3), 1.2)]
    # The +- is the run-to-run noise model (three builds: the 2% default), wider than the run's own 2% band.
    assert points["noise"] == {"sd": 0.02, "source": "default", "dof": 0}
    half = math.exp(1.96 * math.sqrt(2) * 0.02)
    assert points["results"][2]["low"] == pytest.approx(1.2 / half) and points["results"][2]["high"] == pytest.approx(1.2 * half)
    latency = api.get(f"/api/v1/series/{cpu['signature']}/?metric=compiled_latency_ms&page_size=2").json()
    assert latency["count"] == 3 and len(latency["results"]) == 2 and latency["results"][0]["value"] == 2.0
    assert latency["results"][0]["low"] <= 2.0 <= latency["results"][0]["high"]
    assert fields(api.get(f"/api/v1/series/{cpu['signature']}/?metric=colour")) == ["metric"]
    missing = api.get(f"/api/v1/series/{'0' * 40}/")
    assert missing.status_code == 404 and fields(missing) == ["signature"]


def two_builds():
    ingest_build(1, [
        make_result("mlp_loop", "static", speedup=2.0, speedup_noise=0.01),
        make_result("resnet_train", "static", speedup=1.0, speedup_noise=0.01),
        make_result("bert", "static", speedup=1.0),
        make_result("gone_model", "static"),
    ], extra_workloads=EXTRA)
    ingest_build(2, [
        make_result("mlp_loop", "static", speedup=1.5, speedup_noise=0.01),  # -25%: regressed
        make_result("resnet_train", "static", speedup=1.2, speedup_noise=0.01),  # +20%: improved
        bert_with_a_new_break_reason(),
        make_result("new_model", "static"),
    ], extra_workloads=EXTRA)


def bert_with_a_new_break_reason() -> dict:
    """Three graph breaks, one of a reason the base lacks: what the compare filter and a finding call new."""
    bert = make_result("bert", "static", speedup=1.0, graph_break_count=3)
    bert["graph_breaks"].append({"reason": "Data-dependent branching", "location": "bert.py:40", "count": 2})
    return bert


def test_compare_common_cases_with_deltas(api):
    two_builds()
    data = api.get(f"/api/v1/compare/?head={ref_for_day(2)}").json()  # base: the previous build on the class
    assert (data["base"], data["head"], data["machine_class"], data["common"], data["count"]) == (ref_for_day(1), ref_for_day(2), "cpu", 3, 3)
    rows = {r["workload"]: r for r in data["results"]}
    assert rows["mlp_loop"]["changes"]["speedup"] == {"old": 2.0, "new": 1.5, "change": -0.25, "tone": "worse",
                                                      "noise": pytest.approx(TWO_RUNS_95 * METRIC["speedup"].noise_default)}  # no history yet
    assert rows["mlp_loop"]["flags"] == ["regressed"] and rows["resnet_train"]["flags"] == ["improved"]
    assert rows["bert"]["flags"] == ["new_graph_breaks"] and rows["bert"]["config"]["shape_regime"] == "static"
    assert [o["workload"] for o in data["only_base"]] == ["gone_model"] and [o["workload"] for o in data["only_head"]] == ["new_model"]
    assert data["summary"]["speedup"]["old"] == pytest.approx(2 ** (1 / 3))
    regressed = api.get(f"/api/v1/compare/?head={ref_for_day(2)}&base={ref_for_day(1)}&filter=regressed").json()
    assert [r["workload"] for r in regressed["results"]] == ["mlp_loop"] and regressed["common"] == 3
    swapped = api.get(f"/api/v1/compare/?head={ref_for_day(1)}&base={ref_for_day(2)}&filter=improved&sort=speedup&dir=desc").json()
    assert [r["workload"] for r in swapped["results"]] == ["mlp_loop"]


@pytest.mark.parametrize("params, field, status", [
    ("", "head", 400),
    ("head=1234567", "head", 404),
    ("head={d1}", "base", 404),  # no build before the first
    ("head={d2}&base=9999999", "base", 404),
    ("head={d2}&machine_class=gpu-h10", "machine_class", 400),  # no host ever had it: a typo (#42 item 6)
    ("head={d2}&threshold=-1", "threshold", 400),
    ("head={d2}&filter=worse", "filter", 400),
])
def test_bad_compare_parameters(api, params, field, status):
    two_builds()
    response = api.get("/api/v1/compare/?" + params.format(d1=ref_for_day(1), d2=ref_for_day(2)))
    assert response.status_code == status and fields(response) == [field], response.json()


def test_compare_asks_for_a_machine_class_when_a_build_ran_on_several(api):
    two_builds()
    ingest_build(2, [make_result("mlp_loop", "static")], machine_class="gpu-h100", sha=sha_for(2))
    response = api.get(f"/api/v1/compare/?head={ref_for_day(2)}")
    assert response.status_code == 400 and fields(response) == ["machine_class"] and "cpu, gpu-h100" in response.json()["detail"]
    assert api.get(f"/api/v1/compare/?head={ref_for_day(2)}&machine_class=cpu").json()["common"] == 3
    # a class the build never ran on: its head has no results there
    missing = api.get(f"/api/v1/compare/?head={ref_for_day(1)}&machine_class=gpu-h100")
    assert missing.status_code == 404 and fields(missing) == ["head"]
