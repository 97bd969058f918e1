"""The workload page: latest figures per configuration, trends with noise bands, reasons with the
build that first showed them, status history, repro, and clear 4xx answers."""
from __future__ import annotations

import json
import re

import pytest

from dashboard.results.aggregates import median_interval
from tests.dashboard.page_history import cases, ingest_build, ref_for_day
from tests.documents import host_environment, make_result

pytestmark = pytest.mark.django_db

BREAK_A = {"reason": "Tensor.item", "location": "model.py:12", "count": 1}
BREAK_B = {"reason": "print() call", "location": "model.py:40", "count": 1}


def chart_data(html: str) -> dict:
    return json.loads(html.split('id="chart-data" type="application/json">')[1].split("</script>")[0])


def test_median_interval_widens_with_fewer_samples():
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)
    many = list(range(100))
    low, high = median_interval(many)
    assert 35 <= low < 50 < high <= 65
    assert median_interval([]) is None and median_interval(None) is None


def history():
    """mlp_loop static: a pass, a new graph break, a compile error, a pass again."""
    ingest_build(1, [make_result("mlp_loop", "static", speedup=1.5, speedup_noise=0.02)])
    second = make_result("mlp_loop", "static", speedup=1.2, graph_break_count=2)
    second["graph_breaks"] = [BREAK_A, BREAK_B]
    second["recompiles"] = [{"reason": "tensor 'x' size mismatch at index 0", "count": 1}]
    ingest_build(2, [second, make_result("mlp_loop", "unbacked", speedup=0.7)])
    third = make_result("mlp_loop", "static", status="compile_error", speedup=None, graph_break_count=None, recompile_count=None)
    third["graph_breaks"] = []
    third["error"] = {"type": "InductorError", "message": "<boom> in lowering"}
    ingest_build(3, [third])
    fourth = make_result("mlp_loop", "static", speedup=1.4, graph_break_count=1)
    fourth["graph_breaks"] = [BREAK_B]
    ingest_build(4, [fourth])


def test_latest_figures_of_every_configuration_and_the_selected_series(client):
    history()
    html = client.get("/workloads/mlp_loop/").content.decode()

    latest = html.split('<table class="latest">')[1].split("</table>")[0]
    assert "default · static · float32" in latest and "default · unbacked · float32" in latest
    assert ref_for_day(4) in latest and ref_for_day(2) in latest  # each configuration's own latest build
    assert "1.400×" in latest and "0.700×" in latest
    assert 'id="repro-command">python -m runner run --size tiny --workloads mlp_loop --modes default --regimes static</code>' in re.sub(r"</?span>", "", html)
    assert "<span>--regimes</span> <span>static</span>" in html  # one unbreakable span per word


def test_reasons_show_the_build_where_each_first_appeared(client):
    history()
    html = client.get("/workloads/mlp_loop/?mode=default&regime=static&dtype=float32").content.decode()
    reasons = html.split('<table class="reasons">')[1].split("</table>")[0]
    rows = reasons.split("<tr class=")[1:]
    by_reason = {r.split("<summary>")[1].split("</summary>")[0]: r for r in rows}

    assert set(by_reason) == {"Tensor.item", "print() call", "tensor &#x27;x&#x27; size mismatch at index 0"}
    assert by_reason["print() call"].startswith('"current"') and f"head={ref_for_day(2)}" in by_reason["print() call"]
    assert "still present" in by_reason["print() call"]
    tensor_item = by_reason["Tensor.item"]
    assert tensor_item.startswith('"gone"') and f"head={ref_for_day(1)}" in tensor_item and ref_for_day(2) in tensor_item


def test_status_history_and_trend_data_with_noise_bands(client):
    history()
    html = client.get("/workloads/mlp_loop/?mode=default&regime=static&dtype=float32&range=all").content.decode()

    segments = html.split('<table class="segments">')[1].split("</table>")[0]
    statuses = [s.split("</td>")[0] for s in segments.split('<td class="status">')[1:]]
    assert statuses == ["pass", "compile_error", "pass"]  # newest first
    data = chart_data(html)
    assert data["refs"] == [ref_for_day(d) for d in (1, 2, 3, 4)]
    assert data["status"] == ["pass", "pass", "compile_error", "pass"]
    speedup = next(c for c in data["charts"] if c["id"] == "series-speedup")["lines"][0]
    assert speedup["y"] == [1.5, 1.2, None, 1.4]
    # the run's ±2 % as a ratio interval: 1.5 / 1.02 .. 1.5 x 1.02 (never below zero however wide)
    assert speedup["low"][0] == pytest.approx(1.5 / 1.02, rel=1e-3) and speedup["high"][0] == pytest.approx(1.5 * 1.02)
    latency = next(c for c in data["charts"] if c["id"] == "series-latency")["lines"][0]
    assert latency["low"][0] == 1.9 and latency["high"][0] == 2.1  # the compiled_ms samples' range
    assert next(c for c in data["charts"] if c["id"] == "series-breaks")["lines"][0]["y"] == [1, 2, None, 1]


def host_bound_history(probes_and_shares):
    for day, (probe_ms, share) in enumerate(probes_and_shares, start=1):
        result = make_result("resnet_train", "static", speedup=1.5 if probe_ms < 1.1 else 1.2)
        result["environment"] = host_environment(share, probe_ms)
        ingest_build(day, [result])


def test_trends_mark_host_bound_builds_measured_on_a_slowed_host(client):
    host_bound_history([(0.95, 0.98)] * 4 + [(1.17, 0.98), (1.0, 0.98), (1.3, 0.4)])
    data = chart_data(client.get("/workloads/resnet_train/?mode=default&regime=static&dtype=float32&range=all").content.decode())
    charts = {c["id"]: c for c in data["charts"]}
    assert [h["i"] for h in charts["series-speedup"]["host"]] == [4]  # the last build is not host-bound
    assert "host 1.23x slower than the builds before (probe 1.17 vs 0.95 ms)" in charts["series-speedup"]["host"][0]["text"]
    assert [h["i"] for h in charts["series-latency"]["host"]] == [4]
    assert charts["series-compile"]["host"] == [] and charts["series-memory"]["host"] == []


def test_error_excerpt_and_html_in_names_are_escaped(client):
    evil = '<img src=x onerror=alert(1)>'
    ingest_build(1, [make_result(evil, "static", status="crash", speedup=None)], extra_workloads=[{"name": evil, "phase": "infer"}])
    overview = client.get("/").content.decode()
    link = "/workloads/%3Cimg%20src=x%20onerror=alert(1)%3E/"
    assert f'href="{link}"' in overview and evil not in overview
    page = client.get(link)
    html = page.content.decode()
    assert page.status_code == 200 and evil not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_unknown_workload_is_404_and_bad_parameters_are_400(client):
    ingest_build(1, cases())
    assert client.get("/workloads/nope/").status_code == 404
    for query, parameter in (("mode=fast", "mode"), ("range=5d", "range"), ("machine=gpu-x", "machine"), ("dtype=int8", "dtype")):
        page = client.get(f"/workloads/mlp_loop/?{query}")
        assert page.status_code == 400, query
        assert f'data-parameter="{parameter}"' in page.content.decode()
    # A valid configuration that this workload never ran in is a page that says so, not an error.
    page = client.get("/workloads/mlp_loop/?mode=max-autotune")
    assert page.status_code == 200 and b"was not measured in this configuration" in page.content


def test_a_workload_name_with_a_slash_has_a_page(client):
    name = "hf/bert-base"
    ingest_build(1, [make_result(name, "static")], extra_workloads=[{"name": name, "phase": "infer"}])
    page = client.get("/workloads/hf/bert-base/")
    assert page.status_code == 200 and b"hf/bert-base" in page.content


def test_the_page_opens_on_the_class_that_measured_the_workload_last_never_a_variants_run(client):
    from dashboard.results.models import Workload
    from dashboard.results.selectors.workloads import workload_classes_newest
    from dashboard.results.services import run_ingest
    from tests.dashboard.test_variants import variant_document
    from tests.documents import make_document

    gpu = make_document(git_sha="b" * 40, started_at="2026-11-20T05:00:00+00:00")
    gpu["machine"].update(machine_class="gpu-h100", hostname="h100-box")
    run_ingest(document=gpu)
    run_ingest(document=make_document(started_at="2026-11-10T05:00:00+00:00"))  # cpu, measured before it
    variant = variant_document()  # cpu, measured after both, a variant build: not a point of the page's trends
    variant["run"]["started_at"] = "2026-11-25T05:00:00+00:00"
    run_ingest(document=variant)
    assert workload_classes_newest(workload=Workload.objects.get(name="mlp_loop")) == ["gpu-h100", "cpu"]
    assert "<h2>Latest figures on gpu-h100, every configuration</h2>" in client.get("/workloads/mlp_loop/").content.decode()
