"""#32: the run page says how a distributed case ran (wrapper, world size, order, checkpointing), in a
real headless Chromium; a single-process case says nothing of it. PTBENCH_SHOTS=<dir> saves the page."""
from __future__ import annotations

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot
from tests.documents import WORKLOADS, make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

DDP, FSDP = "dist:gpt@train+ddp", "dist:mlp@train+fsdp+compile_first+checkpoint"


def _distributed(parallel: str, order: str, checkpoint: bool) -> dict:
    # As runner/engine/distributed/rank.py records it (docs/distributed.md).
    return {"implementation": "workloads.families.dist.GPTLM", "distributed": {
        "world_size": 2, "backend": "gloo", "parallel": parallel, "order": order, "checkpoint": checkpoint,
        "graph_breaks_per_collective": {"other": 5}, "graph_breaks_per_rank": [5, 5],
        "peak_memory_per_rank": [{"eager": 143104, "compiled": 175872}, {"eager": 143104, "compiled": 143104}],
        "rank_exits": ["exited with code 0", "exited with code 0"]}}


def test_the_run_page_shows_how_each_distributed_case_ran(browser, live_server):
    described = [{"name": name, "category": "dist", "phase": "train", "dynamic_dims": [], "description": "distributed step"}
                 for name in (DDP, FSDP)]
    results = [make_result(DDP, "static", graph_break_count=5), make_result(FSDP, "static", status="fail_accuracy"),
               make_result("mlp_loop", "static")]
    results[0]["environment"] = _distributed("ddp", "wrap-then-compile", False)
    results[1]["environment"] = _distributed("fsdp", "compile-then-wrap", True)
    results[1]["error"] = {"type": "AccuracyMismatch", "message": "gradients after one compiled step differ from eager fsdp on rank(s) 0, 1"}
    document = make_document(results=results)
    document["workloads"] = [*WORKLOADS, *described]
    run_ingest_and_detect(document=document)
    page, problems = open_page(browser, f"{live_server.url}/runs/{document['run']['id']}/", viewport={"width": 1400, "height": 900})
    shot(page, "run-distributed")
    rows = page.locator("table.results tr[class^=status-]")
    by_name = {row.locator("td").first.locator("a").inner_text(): row for row in rows.all()}
    assert by_name[DDP].locator("div.distributed").inner_text() == "ddp · world size 2 · wrap-then-compile"
    assert by_name[FSDP].locator("div.distributed").inner_text() == "fsdp · world size 2 · compile-then-wrap · checkpointed"
    assert by_name[FSDP].locator("td").nth(4).inner_text() == "fail_accuracy"
    assert by_name["mlp_loop"].locator("div.distributed").count() == 0
    assert "differ from eager fsdp on rank(s) 0, 1" in page.inner_text("table.results")
    by_name[FSDP].locator("td").first.locator("a").click()  # its workload page names the model and the options
    page.wait_for_selector("#family-model")
    shot(page, "workload-distributed")
    assert page.inner_text("#family-model").startswith(
        "family dist · distributed-step model mlp · options train+fsdp+compile_first+checkpoint")
    assert problems == []
