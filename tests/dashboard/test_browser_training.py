"""The overview's training rows (docs/llms.md, "Whole training steps"): per suite, the model-only
training cases apart from the whole steps, with pass rate, geomean speedup, compile time and memory,
in headless Chromium on a document built in code (its figures are the test's, not measured); and
/dynamic/ with an LLM's steps, each unbacked on its token dim beside backed (a measured document)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dashboard.results.services import run_ingest
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot
from tests.documents import WORKLOADS, make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
VIEW = {"width": 1400, "height": 900}


def _train(name: str) -> dict:
    return {"name": name, "category": name.partition(":")[0] or "whole-train-step", "phase": "train", "dynamic_dims": ["input_ids:0"],
            "description": "a training step"}


def test_the_overview_has_a_training_row_per_suite_and_compiled_part(browser, live_server):
    results = [
        make_result("mlp_loop", "static", speedup=3.0),  # inference: not a training row
        make_result("resnet_train", "static", speedup=1.2, compile_time_cold_s=10.0, eager_peak_memory_bytes=3_000_000_000,
                    compiled_peak_memory_bytes=2_000_000_000),
        make_result("transformer_train_step", "static", speedup=2.0, compile_time_cold_s=30.0),
        make_result("hf:BertForMaskedLM@train", "static", speedup=1.5, compile_time_cold_s=20.0),
        make_result("hf:BertForMaskedLM@train_step", "static", speedup=1.8, compile_time_cold_s=40.0),
        make_result("hf:T5Small@train_step", "static", status="compile_error", speedup=None),
    ]
    workloads = [*WORKLOADS, *(_train(n) for n in ("transformer_train_step", "hf:BertForMaskedLM@train", "hf:BertForMaskedLM@train_step",
                                                   "hf:T5Small@train_step"))]
    run_ingest(document={**make_document(results=results), "workloads": workloads})
    page, problems = open_page(browser, f"{live_server.url}/", viewport=VIEW)
    shot(page, "home-training")
    rows = {(row.get_attribute("data-suite"), row.get_attribute("data-compiled")): row.locator("td").all_inner_texts()
            for row in page.locator("table.training tr.training-row").all()}
    assert list(rows) == [("core", "model"), ("core", "whole step"), ("hf", "model"), ("hf", "whole step")]
    # suite, compiled, cases, pass rate (passed), geomean speedup, compile s, peak memory, memory ratio
    assert rows[("core", "model")] == ["core", "model", "1", "100% (1)", "1.200x", "10.00 s", "2.00 GB", "1.50"]
    assert rows[("core", "whole step")][2:] == ["1", "100% (1)", "2.000x", "30.00 s", "1.00 MB", "2.00"]
    assert rows[("hf", "model")][2:6] == ["1", "100% (1)", "1.500x", "20.00 s"]
    assert rows[("hf", "whole step")][2:6] == ["2", "50% (1)", "1.800x", "40.00 s"]  # the compile error counts, unmeasured
    assert "@train_step" in page.locator("h3.training-heading + p").inner_text()
    assert problems == []


LLM_DOCUMENT = Path(__file__).resolve().parents[2] / "bench" / "results" / "llms" / "cpu-tiny-llama-2026-11-28.json"


def test_dynamic_pairs_each_llm_step_unbacked_with_backed_on_its_token_dim(browser, live_server):
    """A measured CPU document (tiny Llama-3.2-1B, its speedups noise on a loaded host: its notes say so)."""
    call_command("ingest", "--imported", "-v", "0", str(LLM_DOCUMENT))
    cases = {(r["workload"], r["config"]["shape_regime"]): r for r in json.loads(LLM_DOCUMENT.read_text())["results"]}
    page, problems = open_page(browser, f"{live_server.url}/dynamic/?machine=cpu&mode=default&dtype=float32", viewport=VIEW)
    shot(page, "dynamic-llm")
    for step in ("prefill", "decode"):
        workload = f"hf:meta-llama/Llama-3.2-1B@{step}"
        row = page.locator("#dynamic-table tr").filter(has=page.locator(f'a:text-is("{workload}")')).locator("td")
        unbacked, backed = cases[(workload, "unbacked")]["metrics"]["speedup"], cases[(workload, "backed")]["metrics"]["speedup"]
        assert row.nth(1).inner_text() == f"{backed:.3f}×" and row.nth(2).inner_text() == f"{unbacked:.3f}×"
        assert row.nth(3).inner_text().split() == [f"{unbacked / backed:.3f}", "too", "noisy", "to", "track"]  # its intervals
    page.goto(f"{live_server.url}/workloads/hf:meta-llama/Llama-3.2-1B@decode/", wait_until="networkidle")
    assert page.inner_text("#family-model").startswith("family hf · LLM (published config) meta-llama/Llama-3.2-1B · options decode")
    assert "decode with the tokens flattened into one dim" in page.inner_text("body")
    assert problems == []
