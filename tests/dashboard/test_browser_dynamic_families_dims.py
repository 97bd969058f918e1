"""/dynamic/ per dims on the H100 documents of 10 Hugging Face models (bench/results/families,
locked-dynamic and locked-static, imported as the quick start does): backed on every dim, unbacked on
the batch alone and on the sequence alone, so ``?dims=batch`` and ``?dims=sequence`` pair each
unbacked case with the backed case on every dim and say so (docs/families.md, "What the pages
show"); the per-suite table and "what blocks the gap" for the dims view. Screenshots go to
/work/screens/families where that folder's parent exists."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_families import WIDE, _screenshot

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
FAMILIES = Path(__file__).resolve().parents[2] / "bench" / "results" / "families"
DOCUMENTS = sorted(FAMILIES.glob("locked-dynamic/*.json")) + sorted(FAMILIES.glob("locked-static/*.json"))
PAGE = "/dynamic/?machine=gpu-h100&mode=default&dtype=bfloat16"


@pytest.fixture
def imported():
    call_command("ingest", "--imported", "-v", "0", *map(str, DOCUMENTS))


def documents_cases(regime: str, dims: list[str] | None) -> dict[str, dict]:
    """The bf16 default-mode cases of ``regime`` on exactly ``dims`` by workload, from the documents alone."""
    out = {}
    for path in DOCUMENTS:
        for result in json.loads(path.read_text())["results"]:
            config = result["config"]
            if (config["shape_regime"], config["dtype"], config["compile_mode"], config.get("dims")) == (regime, "bfloat16", "default", dims):
                out[result["workload"]] = result
    return out


def _row(page, workload: str):
    return page.locator("#dynamic-table tr", has=page.locator("a", has_text=workload)).filter(
        has=page.locator(f'a:text-is("{workload}")'))


def test_dims_batch_pairs_unbacked_on_batch_with_backed_on_every_dim_and_says_so(browser, live_server, imported):
    page, problems = open_page(browser, live_server.url + PAGE + "&dims=batch", viewport=WIDE)
    # No unbacked case on every dim in these documents: the picker offers the two dims sets alone.
    assert page.locator("#pick-dims option").all_inner_texts() == ["batch", "sequence"]
    assert page.locator("#pick-dims").input_value() == "batch"
    note = page.inner_text("#dynamic-every-dim")
    assert note.startswith("unbacked on batch against backed on every dim: no backed case on batch alone was measured")
    assert " for " not in note  # every pair stands against backed on every dim
    assert "(on every dim)" in page.inner_text("#dynamic-table thead")
    bert = _row(page, "hf:BertForMaskedLM").locator("td")
    assert bert.nth(1).inner_text() == "0.483×" and bert.nth(2).inner_text() == "0.538×"
    assert bert.nth(3).inner_text() == f"{0.5384193153707053 / 0.48309306939083657:.3f}"
    unbacked, backed = documents_cases("unbacked", ["batch"]), documents_cases("backed", None)
    assert page.locator("#dynamic-table tbody tr").count() == len(unbacked) == 8
    passed = [w for w, r in unbacked.items() if r["status"] == "pass" and backed[w]["status"] == "pass"]
    family = page.locator("#family-gaps tr[data-suite=hf] td").all_inner_texts()
    assert family[:3] == ["hf", "8", str(len(passed))] and family[-1] == "backed on every dim"
    assert "against" in page.inner_text("#family-gaps thead")
    _screenshot(page, "dynamic-dims-batch.png")
    assert problems == []


def test_dims_sequence_shows_the_data_dependent_errors_and_the_triton_error_that_block_the_gap(browser, live_server, imported):
    page, problems = open_page(browser, live_server.url + PAGE + "&dims=sequence", viewport=WIDE)
    assert "unbacked on sequence against backed on every dim" in page.inner_text("#dynamic-every-dim")
    bert = _row(page, "hf:BertForMaskedLM")
    assert bert.locator("td").nth(1).inner_text() == "0.483×" and bert.locator("td").nth(2).inner_text() == "compile_error"
    blocker = bert.locator("td.blocker").inner_text()
    assert blocker.startswith("data-dependent unbacked:") and "AssertionError: failed OrderedSet([]) >= OrderedSet([u1])" in blocker
    gpt2 = _row(page, "hf:GPT2ForSequenceClassification").locator("td.blocker").inner_text()
    assert not gpt2.startswith("data-dependent") and "triton_red_fused__to_copy_arange_argmax_mul_ne_0" in gpt2
    assert "Loop-carried variable _tmp7" in gpt2
    unbacked = documents_cases("unbacked", ["sequence"])
    failed = [w for w, r in unbacked.items() if r["status"] != "pass"]
    family = page.locator("#family-gaps tr[data-suite=hf] td").all_inner_texts()
    # 10 models; failed: the five data-dependent errors and GPT2's Triton error.
    assert family[:2] == ["hf", str(len(unbacked))] and family[4:6] == [str(len(failed)), str(len(failed) - 1)] and len(failed) == 6
    _screenshot(page, "dynamic-dims-sequence.png")
    assert problems == []
