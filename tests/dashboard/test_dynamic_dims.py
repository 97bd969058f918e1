"""Regime dims on the dashboard (docs/case-config.md): a result whose configuration names dims is its
own configuration (key, tags, label), and /dynamic/ pairs backed with unbacked only within the same
dims: every declared dim by default, ``?dims=batch`` the batch-only pair. In a real headless
Chromium too (PTBENCH_SHOTS=<dir> saves the screenshot)."""
from __future__ import annotations

import pytest

from dashboard.results.models import Build, Config, Result
from dashboard.results.selectors.dynamic import dynamic_options, dynamic_pairs, pair_failure
from dashboard.results.selectors.dynamic_families import _cuda_graphs_skipped, dynamic_blockers, family_gaps, headline
from contract import document as run_document
from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import make_document, make_result
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build
from tests.dashboard.test_browser_noise_rule import shot
from tests.dashboard.test_dynamic import pair, table_rows

VIEW = {"width": 1400, "height": 900}
BERT = {"name": "bert_encoder", "category": "transformer", "phase": "infer", "dynamic_dims": ["x:0"], "description": "bert"}


def with_dims(results: list[dict], dims: list[str]) -> list[dict]:
    for result in results:
        result["config"]["dims"] = dims
    return results


def history() -> None:
    # Every declared dim: unbacked as fast as backed. Batch only: unbacked half as fast.
    ingest_build(1, pair("mlp_loop", 2.0, 2.0) + with_dims(pair("mlp_loop", 2.0, 1.0), ["batch"]))


@pytest.mark.django_db
def test_a_dims_configuration_is_stored_as_its_own_and_keys_without_dims_are_unchanged():
    history()
    keys = sorted(Config.objects.values_list("key", flat=True))
    assert keys == ["default/backed/float32/cpu", "default/backed/float32/cpu/dims=batch",
                    "default/unbacked/float32/cpu", "default/unbacked/float32/cpu/dims=batch"]
    config = Config.objects.get(key="default/unbacked/float32/cpu/dims=batch")
    assert config.tags["dims"] == ["batch"] and "dims" not in Config.objects.get(key="default/unbacked/float32/cpu").tags


@pytest.mark.django_db
@pytest.mark.parametrize("regime, dims", [("unbacked", ["a/b"]), ("unbacked", []), ("backed", "batch"), ("static", ["batch"])])
def test_a_document_with_bad_dims_is_refused_naming_the_field_and_nothing_is_stored(regime, dims):
    result = make_result("mlp_loop", regime)
    result["config"]["dims"] = dims
    with pytest.raises(run_document.InvalidDocument) as caught:
        run_ingest_and_detect(document=make_document(results=[result]))
    assert caught.value.errors[0].field.startswith("results[0].config.dims")  # the list, or its item at fault
    assert not Config.objects.exists() and not Result.objects.exists()


@pytest.mark.django_db
def test_dynamic_pairs_within_the_same_dims(client):
    history()
    every = client.get("/dynamic/").content.decode()
    assert "1.000" in table_rows(every)["mlp_loop"] and 'id="dynamic-dims"' not in every
    batch = client.get("/dynamic/?dims=batch").content.decode()
    assert "0.500" in table_rows(batch)["mlp_loop"]
    assert "marked only the <strong>batch</strong> dims" in batch
    bad = client.get("/dynamic/?dims=height")
    assert bad.status_code == 400 and 'data-parameter="dims"' in bad.content.decode()


@pytest.mark.django_db
def test_the_workload_page_picks_the_dims_configuration_apart_from_every_dim(client):
    history()
    every = client.get("/workloads/mlp_loop/?regime=unbacked").content.decode()
    assert "<h2>default · unbacked · float32 on cpu</h2>" in every
    batch = client.get("/workloads/mlp_loop/?regime=unbacked&dims=batch").content.decode()
    assert "<h2>default · unbacked (batch) · float32 on cpu</h2>" in batch
    assert '<option value="batch" selected>batch</option>' in batch and '<option value="">every declared dim</option>' in batch
    bad = client.get("/workloads/mlp_loop/?dims=height")
    assert bad.status_code == 400 and 'data-parameter="dims"' in bad.content.decode()
    # /dynamic/'s batch-only row links to the batch-only series.
    assert "regime=unbacked&amp;dtype=float32&amp;dims=batch" in client.get("/dynamic/?dims=batch").content.decode()


@pytest.mark.django_db
def test_a_cuda_graph_mode_that_ran_without_cuda_graphs_says_so_where_the_gap_is(client):
    # The H200's LLM decodes: reduce-overhead with unbacked tokens ran at default mode's speed
    # (bench/results/llm-h200-2026-11-28/README.md); the runner records inductor's skip lines.
    backed = make_result("mlp_loop", "backed", mode="reduce-overhead", speedup=4.0)
    backed.setdefault("environment", {})["cuda_graphs"] = {"skipped_graphs": 0, "reasons": []}
    unbacked = make_result("mlp_loop", "unbacked", mode="reduce-overhead", speedup=2.0)
    unbacked.setdefault("environment", {})["cuda_graphs"] = {
        "skipped_graphs": 2, "reasons": ["incompatible op aten._local_scalar_dense.default", "mutated inputs (1 instances)"]}
    ingest_build(1, [backed, unbacked])
    blocker = dynamic_blockers(machine_class="cpu", mode="reduce-overhead", dtype="float32", build_id=Build.objects.get().id)["mlp_loop"]
    assert (blocker.regime, blocker.status, blocker.data_dependent) == ("unbacked", "pass", False)
    assert blocker.text == ("CUDA graphs skipped for 2 graphs: incompatible op aten._local_scalar_dense.default; "
                            "mutated inputs (1 instances)")
    page = client.get("/dynamic/?mode=reduce-overhead").content.decode()
    assert "CUDA graphs skipped for 2 graphs: incompatible op aten._local_scalar_dense.default" in table_rows(page)["mlp_loop"]
    assert 'class="num failed worse"' not in page  # a skip is why, not a failure: the suite row counts none


def test_a_skip_reason_with_a_stack_names_its_innermost_frame_once():
    # Inductor appends the stack outermost first ("Found from :"); the line that wrote into the input
    # is the last frame (Qwen3's unbacked decode on the H200, 2026-11-29: the KV cache's index_copy_).
    site = "/opt/torch/.venv/lib/python3.12/site-packages/transformers"
    reason = (f'mutated inputs (56 instances). Found from : \n   File "{site}/utils/generic.py", line 939, in wrapper\n'
              f'    output = func(self, *args, **kwargs)\n  File "{site}/cache_utils.py", line 482, in update\n'
              "    self.keys.index_copy_(2, cache_position, key_states)")
    text = _cuda_graphs_skipped({"skipped_graphs": 2, "reasons": [reason, reason]})
    assert text == ("CUDA graphs skipped for 2 graphs: mutated inputs (56 instances) at transformers/cache_utils.py:482 "
                    "in update: self.keys.index_copy_(2, cache_position, key_states)")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_dims_picker_shows_the_batch_only_pair(browser, live_server):
    history()
    page, problems = open_page(browser, f"{live_server.url}/dynamic/", viewport=VIEW)
    picker = page.locator("#pick-dims")
    assert picker.locator("option").all_inner_texts() == ["every declared dim", "batch"]
    assert page.locator("#dynamic-table").get_by_role("row", name="mlp_loop").inner_text().count("1.000") >= 1
    picker.select_option("batch")
    page.wait_for_url("**dims=batch**")
    page.wait_for_load_state("networkidle")
    shot(page, "dynamic-dims-batch")
    assert "marked only the batch dims" in page.locator("#dynamic-dims").inner_text()
    assert "0.500" in page.locator("#dynamic-table").get_by_role("row", name="mlp_loop").inner_text()
    page.locator("#dynamic-table").get_by_role("link", name="mlp_loop").click()
    page.wait_for_load_state("networkidle")
    shot(page, "workload-dims-batch")
    assert page.get_by_role("heading", name="default · unbacked (batch) · float32 on cpu").count() == 1
    assert page.locator("#workload-pickers select[name=dims]").input_value() == "batch"
    assert problems == []


def fallback_history() -> None:
    """Unbacked on batch with no backed case on batch (the H100 documents' shape): mlp_loop backed
    on every dim 2.0, unbacked on batch 1.5; bert_encoder unbacked on batch hits a data-dependent
    error; resnet_train has backed and unbacked on batch both (same dims win)."""
    failed = make_result("bert_encoder", "unbacked", status="compile_error", speedup=None)
    failed["error"] = {"type": "torch._inductor.exc.InductorError",
                       "message": "AssertionError: failed OrderedSet([]) >= OrderedSet([u1]) (inductor >= fx)"}
    ingest_build(1, pair("mlp_loop", 2.0, 2.0) + pair("bert_encoder", 3.0, 3.0) + pair("resnet_train", 4.0, 4.0)
                 + with_dims([make_result("mlp_loop", "unbacked", speedup=1.5), failed], ["batch"])
                 + with_dims(pair("resnet_train", 2.0, 1.0), ["batch"]), extra_workloads=[BERT])


@pytest.mark.django_db
def test_unbacked_on_batch_without_backed_on_batch_pairs_with_backed_on_every_dim():
    fallback_history()
    assert ("default", "float32", "batch") in dynamic_options(machine_class="cpu")
    build_id = Build.objects.get().id
    pairs = {p.workload: p for p in dynamic_pairs(machine_class="cpu", mode="default", dtype="float32", build_id=build_id, dims=("batch",))}
    assert pairs["mlp_loop"].backed_every_dim and pairs["mlp_loop"].gap == pytest.approx(0.75)  # 1.5 / backed on every dim 2.0
    assert not pairs["resnet_train"].backed_every_dim and pairs["resnet_train"].gap == pytest.approx(0.5)  # same dims: 1.0 / 2.0
    assert pairs["bert_encoder"].backed_every_dim and pairs["bert_encoder"].backed.speedup == 3.0
    # Every dim is as it was: no pair there is marked.
    every = dynamic_pairs(machine_class="cpu", mode="default", dtype="float32", build_id=build_id)
    assert [p.gap for p in every] == [1.0, 1.0, 1.0] and not any(p.backed_every_dim for p in every)
    blockers = dynamic_blockers(machine_class="cpu", mode="default", dtype="float32", build_id=build_id, dims=("batch",))
    assert set(blockers) == {"bert_encoder"} and blockers["bert_encoder"].regime == "unbacked" and blockers["bert_encoder"].data_dependent
    families = family_gaps(list(pairs.values()), blockers)
    assert [(f.family, f.workloads, f.measured, f.failed, f.data_dependent, f.backed_every_dim) for f in families] == [("core", 3, 2, 1, 1, 2)]


@pytest.mark.django_db
def test_a_backed_failure_on_every_dim_blocks_the_batch_pair_and_is_named():
    failed = make_result("mlp_loop", "backed", status="compile_error", speedup=None)
    failed["error"] = {"type": "RuntimeError", "message": "backed broke"}
    ingest_build(1, [failed, make_result("mlp_loop", "unbacked", speedup=2.0)] + with_dims([make_result("mlp_loop", "unbacked", speedup=1.5)], ["batch"]))
    build_id = Build.objects.get().id
    [only] = dynamic_pairs(machine_class="cpu", mode="default", dtype="float32", build_id=build_id, dims=("batch",))
    assert only.backed_every_dim and only.gap is None and pair_failure(only.backed, only.unbacked) == "backed compile_error"
    blocker = dynamic_blockers(machine_class="cpu", mode="default", dtype="float32", build_id=build_id, dims=("batch",))["mlp_loop"]
    assert (blocker.regime, blocker.text, blocker.data_dependent) == ("backed", "RuntimeError: backed broke", False)


@pytest.mark.django_db
def test_unbacked_on_batch_alone_without_any_backed_is_not_offered():
    ingest_build(1, with_dims([make_result("mlp_loop", "unbacked", speedup=1.5)], ["batch"]) + [make_result("mlp_loop", "static")])
    assert dynamic_options(machine_class="cpu") == []


@pytest.mark.django_db
def test_the_dims_page_says_which_pairs_stand_against_backed_on_every_dim(client):
    fallback_history()
    html = client.get("/dynamic/?dims=batch").content.decode()
    note = html.split('id="dynamic-every-dim">')[1].split("</p>")[0]
    assert "unbacked on batch against backed on every dim</strong>: no backed case on batch alone was measured for bert_encoder, mlp_loop" in note
    rows = table_rows(html)
    assert "0.750" in rows["mlp_loop"] and "on every dim" in rows["mlp_loop"]
    assert "0.500" in rows["resnet_train"] and "on every dim" not in rows["resnet_train"]
    # The chart's hover knows which cells stand against backed on every dim.
    assert '"every_dim": [[true], [true], [false]]' in html  # bert_encoder, mlp_loop, resnet_train
    every = client.get("/dynamic/").content.decode()
    assert 'id="dynamic-every-dim"' not in every and "on every dim" not in table_rows(every)["mlp_loop"]


def test_an_error_that_only_announces_a_subprocess_error_is_shown_with_its_kernel_and_cause():
    message = ("SubprocException: An exception occurred in a subprocess:\n\nName=triton_red_fused_0\nTraceback (most recent call last):\n"
               '  File "x.py", line 1, in f\n    raise\nAssertionError("Loop-carried variable _tmp7 changes type")\n\nSet TORCHDYNAMO_VERBOSE=1\n')
    assert headline(message) == ('SubprocException: An exception occurred in a subprocess: triton_red_fused_0 '
                                 'AssertionError("Loop-carried variable _tmp7 changes type")')
    assert headline("TypeError: Cannot convert symbols to int\nmore") == "TypeError: Cannot convert symbols to int"
    assert headline("") == ""


@pytest.mark.django_db
def test_a_data_dependent_blocker_reads_as_its_expression_and_the_users_line(client):
    # torch 2.11's export on the GPU (bench/results/compile-paths-gpu-2026-11-27): the line only in "Caused by:"
    failed = make_result("bert_encoder", "unbacked", status="data_dependent_error", speedup=None)
    failed["error"] = {"type": "UserError", "message": "data-dependent guard u0 > 1: Consider annotating your code using "
                       "torch._check*(). Could not guard on data-dependent expression u0 > 1 (unhinted: u0 > 1).  " + "x" * 400}
    failed.setdefault("environment", {})["data_dependent"] = {
        "expression": "u0 > 1", "caused_by": "is_causal = q_length > 1 and attention_mask is None  # "
        "transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward (_dynamo/variables/tensor.py:1951 in evaluate_expr)"}
    other = make_result("mlp_loop", "unbacked", status="data_dependent_error", speedup=None)
    other["error"] = {"type": "UserError", "message": "data-dependent guard Eq(u0, 0) at model.py:7 in forward: ..."}
    other.setdefault("environment", {})["data_dependent"] = {"expression": "Eq(u0, 0)", "source": "model.py:7 in forward"}
    ingest_build(1, [make_result("bert_encoder", "backed"), failed, make_result("mlp_loop", "backed"), other], extra_workloads=[BERT])
    build_id = Build.objects.get().id
    blockers = dynamic_blockers(machine_class="cpu", mode="default", dtype="float32", build_id=build_id)
    assert blockers["bert_encoder"].text == "u0 > 1 at transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward"
    assert blockers["mlp_loop"].text == "Eq(u0, 0) at model.py:7 in forward" and blockers["mlp_loop"].data_dependent
    assert "Consider annotating" in blockers["bert_encoder"].full  # the whole message stays in the cell's title
    rows = table_rows(client.get("/dynamic/").content.decode())
    assert "u0 &gt; 1 at transformers/integrations/sdpa_attention.py:124" in rows["bert_encoder"]
    assert "Consider annotating" not in rows["bert_encoder"].split("title=")[0]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_real_h200_export_page_names_each_blocker_by_its_expression_and_line_within_1400_px(browser, live_server):
    """The compile paths' H200 documents (bench/results/compile-paths-gpu-2026-11-27, torch 2.11, core
    suite in float32), imported as the quick start does: export backed and unbacked side by side."""
    from pathlib import Path

    results = Path(__file__).resolve().parents[2] / "bench/results/compile-paths-gpu-2026-11-27"
    for name in ("h200-export-core", "h200-export-core-unbacked"):
        run_ingest_and_detect(document=(results / f"{name}.json").read_bytes(), imported=True)
    page, problems = open_page(browser, f"{live_server.url}/dynamic/?machine=gpu-h200&mode=export&dtype=float32", viewport=VIEW)
    shot(page, "dynamic-export-h200")
    table = page.locator("#dynamic-table")
    masked = table.get_by_role("row", name="masked_attention").inner_text()
    assert "0.748" in masked and "1.31 s / 1.87 s" in masked.replace("\n", " ") and "1.422" in masked
    bert = table.get_by_role("row", name="bert_encoder").locator("td.blocker").inner_text()
    assert bert.split() == ["data-dependent", "unbacked:", "u0", ">", "1", "at",
                            "transformers/integrations/sdpa_attention.py:124", "in", "sdpa_attention_forward"]
    llama = table.get_by_role("row", name="llama_decode").locator("td.blocker").inner_text()
    assert "Eq(8192*u0, 0) at transformers/cache_utils.py:158 in get_seq_length" in " ".join(llama.split())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400  # the table fits; no side scrolling
    assert problems == []
