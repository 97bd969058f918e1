"""The "what changed" view (issue #30) on real measurements: one tiny CPU case measured by the runner
as it is and as a build variant that changes its generated code (``inductor.cpp.simdlen=1``: the same
kernel, scalar instead of vector loops), both stored, then compared in the page, the API and from
the compare page's rows. A version-1 document (no phases, no profile) still ingests and reads."""
from __future__ import annotations

import os
from pathlib import Path
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from contract.phases import PHASE_NAMES
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.results.models import Result
from tests.fixtures.browser import open_page
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SPEC = "tests.runner.explain_workloads:PointwiseChain"
VARIANT = {"inductor.cpp.simdlen": 1}
BASE_SHA, VARIANT_LABEL = "cf30153c4c131c8164ee7798e5022d810682e2cb", "cpu.simdlen-1"


def _shot(page, name: str) -> None:
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], name), full_page=True)


def _measure(config: dict | None, warm: bool) -> dict:
    from contract.planning import plan_cases
    from contract.spec import CaseSpec, TimingBudget
    from contract.variants import Overrides
    from runner.engine.executor import CaseExecutor
    from tests.runner.explain_workloads import PointwiseChain

    [case] = plan_cases([(SPEC, PointwiseChain())], modes=["default"], regimes=["static"], dtypes=None, device="cpu",
                        backend="inductor", size="tiny", import_allowed=True, overrides=Overrides.build(config, None)).cases
    spec = CaseSpec(**{**case.spec.__dict__, "timing": TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3)})
    return CaseExecutor(python=sys.executable, timeout_s=300, warm=warm).run(spec, workload_name=case.workload_name, repro=case.repro)


@pytest.fixture(scope="module")
def measured() -> dict:
    """Both cases side by side: processes and inductor caches of their own, nothing here timed."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        base, variant = pool.submit(_measure, None, warm=True), pool.submit(_measure, VARIANT, warm=False)
        return {"base": base.result(), "variant": variant.result()}


def _document(result: dict, *, variant: bool) -> dict:
    document = make_document(results=[result])
    document["schema_version"] = 2
    document["workloads"] = [{"name": result["workload"], "category": "test", "phase": "infer", "dynamic_dims": [],
                              "description": "pointwise chain"}]
    if variant:
        document["build"].update(local_label=VARIANT_LABEL, label="torch 2.13.0 + cpp.simdlen=1",
                                 overrides={"config": VARIANT, "env": {}})
    return document


@pytest.mark.slow
def test_the_runner_records_phases_kernels_and_cost(measured):
    base, variant = measured["base"], measured["variant"]
    assert base["status"] == variant["status"] == "pass"
    cold, warm = base["compile_phases"]["cold"], base["compile_phases"]["warm"]
    assert set(cold["phases"]) <= set(PHASE_NAMES) and {"dynamo", "aot_autograd", "codegen"} <= set(cold["phases"])
    assert sum(cold["phases"].values()) == pytest.approx(cold["total_s"], abs=1e-5)
    assert cold["counts"]["cache_misses"] >= 1 and cold["counts"]["kernels"] >= 1 and cold["counts"]["guards"] >= 1
    assert warm["counts"]["cache_hits"] >= 1 and warm["counts"]["cache_misses"] == 0  # the warm process hit the cache
    [a], [b] = base["kernel_profile"]["kernels"], variant["kernel_profile"]["kernels"]
    assert a["name"] == b["name"] and a["name"].startswith("cpp_fused_")
    assert a["fingerprint"] != b["fingerprint"] and "Vectorized" in a["source"] and "Vectorized" not in b["source"]
    assert "torchinductor" not in a["source"]  # cache paths are normalised away
    assert base["kernel_profile"]["compiled"] and base["kernel_profile"]["eager"]
    # the graph's call is named without its cache key, so both builds' rows match
    assert "## Call CompiledFxGraph HASH ##" in {r["name"] for r in variant["kernel_profile"]["compiled"]}
    assert set(base["cost"]) >= {"build", "compile", "accuracy", "eager_timing", "compiled_timing", "profile", "warm"}
    assert sum(base["cost"].values()) <= base["duration_s"]


@pytest.mark.slow
def test_the_view_shows_the_kernel_whose_code_the_variant_changed(measured, browser, live_server, client):
    run_ingest_and_detect(document=_document(measured["base"], variant=False))
    run_ingest_and_detect(document=_document(measured["variant"], variant=True))
    before = Result.objects.get(build__local_label="")
    after = Result.objects.get(build__local_label=VARIANT_LABEL)
    name = measured["base"]["kernel_profile"]["kernels"][0]["name"]

    page, problems = open_page(browser, f"{live_server.url}/explain/{before.pk}/{after.pk}/", viewport={"width": 1400, "height": 900})
    _shot(page, "explain-variant.png")
    row = page.locator(f"#explain-kernels tr.kernel[data-kernel='{name}']")
    assert row.get_attribute("data-status") in ("changed", "slower", "faster")
    assert " → " in row.locator("code.fingerprint").inner_text()
    assert page.locator("#explain-kernels tr.kernel[data-kernel='## Call CompiledFxGraph HASH ##']").count() == 1
    diff = page.locator(f"tr.kernel-diff[data-diff='{name}']")
    assert "Vectorized" in diff.locator("tr.diff-changed td:first-child, tr.diff-removed td:first-child").all_inner_texts().__str__()
    assert diff.locator("tr.diff-changed, tr.diff-added, tr.diff-removed").count() > 0
    phases = page.locator("#explain-phases tr.phase[data-side='cold']").evaluate_all("rows => rows.map(r => r.dataset.phase)")
    assert phases[0] == "total" and "codegen" in phases
    settings = page.locator("#explain-environment tr[data-key='settings']")
    assert "differs" in settings.get_attribute("class") and "simdlen" in settings.inner_text()
    assert page.locator("#explain-environment tbody tr").first.get_attribute("data-key") == "settings"  # differences first
    assert problems == []

    answer = client.get(f"/api/v1/explain/{before.pk}/{after.pk}/").json()
    [kernel] = [k for k in answer["kernels"] if k["name"] == name]
    assert kernel["code_changed"] is True and kernel["diff"]
    assert answer["before"]["result_id"] == before.pk and answer["after"]["build"].endswith(VARIANT_LABEL)


def test_compare_rows_link_the_view_and_a_version_1_pair_reads_without_records(browser, live_server, client):
    first = make_document(results=[make_result("mlp_loop", "static", compile_time_cold_s=7.5)])
    second = make_document(git_sha="a" * 40, results=[make_result("mlp_loop", "static", compile_time_cold_s=9.0),
                                                      make_result("resnet_train", "static")])
    assert first["schema_version"] == 1
    run_ingest_and_detect(document=first)
    run_ingest_and_detect(document=second)
    before = Result.objects.get(build__git_sha=first["build"]["git_sha"])
    after = Result.objects.get(build__git_sha="a" * 40, workload__name="mlp_loop")
    assert before.compile_phases == {} and before.kernel_profile == {} and before.cost == {}

    page, problems = open_page(browser, f"{live_server.url}/compare/?machine=cpu&base={'cf30153c4c13'}&head={'a' * 12}&metric=compile_time_cold_s")
    link = page.locator("table tr.case a.explain-link")
    assert link.count() == 1
    link.click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/explain/{before.pk}/{after.pk}/?metric=compile_time_cold_s")
    assert "neither result has compile phases or a kernel profile" in page.locator("#explain-cause").inner_text()
    assert page.locator("#explain-metrics tr[data-metric='compile_time_cold_s'] td").all_inner_texts() == [
        "compile cold", "7.50 s", "9.00 s", "+20.0%"]
    assert problems == []

    other = Result.objects.get(workload__name="resnet_train")
    refused = client.get(f"/api/v1/explain/{before.pk}/{other.pk}/")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "after_id"
    assert client.get(f"/explain/{before.pk}/{other.pk}/").status_code == 400
    assert client.get(f"/api/v1/explain/{before.pk}/{after.pk}/?metric=nope").json()["errors"][0]["field"] == "metric"
    assert client.get(f"/api/v1/explain/{before.pk}/999999/").status_code == 404
    assert client.get(f"/explain/{before.pk}/999999/").status_code == 404


def test_ab_rows_link_the_view_with_the_variants_settings_first(browser, live_server):
    from contract.variants import Overrides, variant_label

    base = make_document(results=[make_result("mlp_loop", "static")])
    variant = make_document(results=[make_result("mlp_loop", "static", speedup=1.6)])
    overrides = Overrides.build({"inductor.coordinate_descent_tuning": True})
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    run_ingest_and_detect(document=base)
    run_ingest_and_detect(document=variant)
    ref = f"{base['build']['git_sha'][:12]}+{variant['build']['local_label']}"

    page, problems = open_page(browser, f"{live_server.url}/ab/")
    page.click(f"#ab-variants a:has-text('{ref}')")
    page.wait_for_selector("table.ab")
    page.locator("table.ab tr.case a.explain-link").click()
    page.wait_for_load_state("networkidle")
    before, after = Result.objects.get(build__local_label=""), Result.objects.get(build__local_label=variant["build"]["local_label"])
    assert page.url.endswith(f"/explain/{before.pk}/{after.pk}/")
    first = page.locator("#explain-environment tbody tr").first
    assert first.get_attribute("data-key") == "settings" and "coordinate_descent_tuning" in first.inner_text()
    assert page.locator("#explain-metrics tr[data-metric='speedup'] td").all_inner_texts()[3] == "+28.0%"
    assert problems == []


H100 = Path(__file__).resolve().parents[2] / "bench" / "results" / "explain"


@pytest.fixture
def h100() -> dict[str, Result]:
    """The GPU proof's real H100 documents (bench/gpu/explain_gpu.sh; bert_encoder float32): the plain build,
    inductor.max_fusion_size=1 and inductor.coordinate_descent_tuning=true, imported as the quick start does."""
    out = {}
    for name in ("plain", "fusion1", "cdt"):
        outcome = run_ingest_and_detect(document=(H100 / f"h100-{name}-2026-11-25.json").read_bytes(), imported=True)
        out[name] = Result.objects.get(run_id=outcome.run_id)
    return out


def test_the_real_h100_pairs_name_their_real_causes(h100, browser, live_server):
    plain, fusion1, cdt = h100["plain"], h100["fusion1"], h100["cdt"]
    # max_fusion_size=1: compile +11 % (within compile time's 15 % noise), latency +2.6 % (past its 2 %): the
    # view explains the latency, by the kernels fused differently, not the compile's biggest phase
    page, problems = open_page(browser, f"{live_server.url}/explain/{plain.pk}/{fusion1.pk}/", viewport={"width": 1400, "height": 900})
    _shot(page, "explain-h100-fusion1.png")
    cause = page.locator("#explain-cause")
    assert cause.locator(".cause-metric").get_attribute("data-metric") == "compiled_latency_ms"
    assert "the metric that moved most past its run-to-run noise" in cause.inner_text()
    assert cause.locator(".cause-text").inner_text() == (
        "profiled kernels 3 new and 4 gone (fused differently): +0.7716 ms a call, 98% of the profiled kernels' change")
    statuses = dict(page.locator("#explain-kernels tr.kernel").evaluate_all("rows => rows.map(r => [r.dataset.kernel, r.dataset.status])"))
    assert sorted(n for n, s in statuses.items() if s == "new") == [
        "triton_per_fused_add_addmm_native_layer_norm_view_5", "triton_per_fused_add_addmm_native_layer_norm_view_6",
        "triton_per_fused_native_layer_norm_1", "triton_per_fused_native_layer_norm_2",
        "triton_poi_fused_add_addmm_native_layer_norm_view_7", "triton_poi_fused_add_embedding_expand_gather_slice_0",
        "triton_poi_fused_native_layer_norm_3"]
    assert sorted(n for n, s in statuses.items() if s == "gone") == [
        "Memset (Device)", "triton_per_fused_add_addmm_native_layer_norm_view_2",
        "triton_per_fused_add_embedding_expand_gather_native_layer_norm_slice_0",
        "triton_poi_fused__scaled_dot_product_efficient_attention__to_copy_add_arange_bitwise_and_expand_ge_index_new_ones_scalar_tensor_transpose_unsqueeze_view_where_1"]
    assert statuses["triton_poi_fused_addmm_gelu_view_3"] == statuses["triton_poi_fused_addmm_gelu_view_8"] == "renamed"
    assert statuses["aten::mm"] == "same"
    changed = [n for n, s in statuses.items() if s == "changed"]
    assert len(changed) == 1 and changed[0].endswith("_view_where_4")
    # the whole name is shown (where_4 changed, where_1 gone: they differ only at the end), and a new kernel its code's fingerprint
    assert page.locator(f"#explain-kernels tr.kernel[data-kernel='{changed[0]}'] td").first.inner_text().startswith(changed[0])
    new = page.locator("#explain-kernels tr.kernel[data-kernel='triton_per_fused_add_addmm_native_layer_norm_view_5']")
    assert len(new.locator("code.fingerprint").inner_text()) == 16
    assert page.locator(f"tr.kernel-diff[data-diff='{changed[0]}'] tr.diff-changed").count() > 0
    assert page.locator("#explain-environment tbody tr").first.inner_text().split("\t")[-1] == "inductor.max_fusion_size=1"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1400  # long kernel names wrap
    # the warm compile is on the page, and why two of its phases are not: its graph came from the cache
    warm = page.locator("#explain-phases tr.phase[data-side='warm']").evaluate_all("rows => rows.map(r => r.dataset.phase)")
    assert warm == ["total", "dynamo", "guards", "aot_autograd", "kernel_compile", "first_run"]
    assert page.locator(".phases-not-run[data-side='warm']").inner_text() == (
        "Not in the warm compile on either side: Inductor lowering, code generation (its graph came from the cache: 2 cache hits).")

    # coordinate_descent_tuning: the warm compile +152 % is what moved most; the tuning at the first launch is why
    page.goto(f"{live_server.url}/explain/{plain.pk}/{cdt.pk}/")
    _shot(page, "explain-h100-cdt.png")
    assert page.locator("#explain-cause .cause-metric").get_attribute("data-metric") == "compile_time_warm_s"
    assert page.locator("#explain-cause .cause-text").inner_text() == (
        "first run and launch-time tuning (warm): 0.0553 s -> 4.97 s, 107% of the warm compile's change of +4.61 s")
    first_run = page.locator("#explain-phases tr[data-side='warm'][data-phase='first_run'] td").all_inner_texts()
    assert first_run == ["first run and launch-time tuning", "0.055 s", "4.972 s", "+4.917 s", "107%"]
    page.goto(f"{live_server.url}/explain/{plain.pk}/{cdt.pk}/?metric=compile_time_cold_s")
    assert "(the metric that moved most" not in page.locator("#explain-cause").inner_text()
    assert page.locator("#explain-cause .cause-text").inner_text() == (
        "first run and launch-time tuning (cold): 0.285 s -> 3.76 s, 127% of the cold compile's change of +2.74 s")
    assert problems == []
