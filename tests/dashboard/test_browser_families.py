"""The model families' H100 documents (bench/results/families, imported as the quick start does)
beside the core suite's H100 run of the same build, in headless Chromium: the overview's per-suite
table (figures from the documents, their run notes: five cases sharing one GPU), a family model's
workload page (its model class), /dynamic/'s per-family gap and the data-dependent errors that block
it (docs/families.md, "On the dashboard")."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WIDE = {"width": 1400, "height": 900}
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
CORE = RESULTS / "h100-torch2.11-full-default-2026-11-22.json"
FAMILIES = sorted((RESULTS / "families").glob("r1/*.json")) + sorted((RESULTS / "families").glob("r2/*.json")) \
    + sorted((RESULTS / "families").glob("spread/*.json"))
SCREENS = Path("/work/screens/families")
SHARED_NOTE = "Five cases at a time: five runner processes shared one H100"


@pytest.fixture
def imported():
    call_command("ingest", "--imported", "-v", "0", str(CORE), *map(str, FAMILIES))


def _screenshot(page, name: str) -> None:
    if SCREENS.parent.is_dir():
        SCREENS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENS / name), full_page=True)


def expected_suites(**wanted) -> dict[str, tuple[int, int, float]]:
    """Per suite, from the documents alone: (cases, passed, geomean speedup of the passing cases),
    each case the one of its workload and configuration stored last (the documents in import order)."""
    cases = {}
    for path in [CORE, *FAMILIES]:
        for result in json.loads(path.read_text())["results"]:
            config = result["config"]
            if all(config[k] == v for k, v in wanted.items()):
                cases[(result["workload"], *sorted(config.items()))] = result
    suites: dict[str, list[dict]] = {}
    for (workload, *_), result in cases.items():
        prefix = workload.partition(":")[0] if ":" in workload else "core"
        suites.setdefault(prefix, []).append(result)
    suites["all"] = list(cases.values())
    out = {}
    for suite, results in suites.items():
        passing = [r["metrics"]["speedup"] for r in results if r["status"] == "pass"]
        out[suite] = (len(results), len(passing), math.exp(sum(map(math.log, passing)) / len(passing)))
    return out


def _suite_rows(page) -> dict[str, tuple[int, int, str, str, str]]:
    for summary in page.locator("table.suites details.suite-how summary").all():  # several notes are folded
        summary.click()
    rows = {}
    for row in page.locator("table.suites tr.suite").all():
        rows[row.get_attribute("data-suite")] = (
            int(row.locator("td.cases").inner_text()), int(row.locator("td.passed").inner_text()),
            row.locator("td.pass-rate").inner_text(), row.locator("td.geomean").inner_text(), row.locator("td.suite-notes").inner_text(),
        )
    return rows


def test_the_overview_groups_the_h100_build_by_suite_with_the_documents_figures(browser, live_server, imported):
    page, problems = open_page(browser, live_server.url + "/?machine=gpu-h100", viewport=WIDE)
    rows = _suite_rows(page)
    assert list(rows) == ["core", "hf", "timm", "torchvision", "all"]
    for suite, (cases, passed, geomean) in expected_suites().items():
        shown = rows[suite]
        assert shown[:2] == (cases, passed), suite
        assert shown[2] == f"{round(100 * passed / cases)}%", suite
        assert shown[3] == f"{geomean:.3f}x", suite
    # The families' runs say how they were measured: five cases sharing the GPU, or one at a time.
    assert SHARED_NOTE in rows["hf"][4] and "One case at a time" in rows["hf"][4]
    assert SHARED_NOTE in rows["torchvision"][4] and "One case at a time" not in rows["torchvision"][4]
    assert "ended early" in rows["timm"][4]
    assert SHARED_NOTE not in rows["core"][4]
    assert rows["all"][4] == "12 runs, 10 ended early"  # the suites' notes are not repeated; spread-4 holds the latest
    # BertForMaskedLM and resnet50 cases, so spread-2 and the partial spread-3 count no more
    _screenshot(page, "overview-suites.png")
    assert problems == []


def test_the_static_bf16_filter_gives_the_families_pass_rates_of_the_note(browser, live_server, imported):
    # bench/results/families/README.md: static pass hf 9/10, timm 9/9, torchvision 6/9.
    page, problems = open_page(browser, live_server.url + "/?machine=gpu-h100&regime=static&dtype=bfloat16", viewport=WIDE)
    rows = _suite_rows(page)
    assert "core" not in rows  # the core suite ran in float32 only
    assert {s: rows[s][:2] for s in ("hf", "timm", "torchvision")} == {"hf": (10, 9), "timm": (9, 9), "torchvision": (9, 6)}
    expected = expected_suites(shape_regime="static", dtype="bfloat16")
    assert rows["all"][3] == f"{expected['all'][2]:.3f}x" and rows["all"][:2] == (28, 24)
    assert problems == []


def test_a_family_models_workload_page_shows_its_model_class(browser, live_server, imported):
    page, problems = open_page(browser, live_server.url + "/workloads/hf:BertForMaskedLM@batch/", viewport=WIDE)
    assert page.inner_text("h1") == "hf:BertForMaskedLM@batch"
    line = page.inner_text("#family-model")
    assert "family hf" in line and "transformers class BertForMaskedLM" in line and "options batch" in line
    assert page.locator("#family-model strong.model-class").inner_text() == "BertForMaskedLM"
    assert SHARED_NOTE in page.inner_text("#latest-run-notes")
    page.click("#family-model a")
    assert "Model families" in page.inner_text("body")
    page, problems2 = open_page(browser, live_server.url + "/workloads/timm:resnet50/", viewport=WIDE)
    assert "timm model resnet50" in page.inner_text("#family-model")
    # its latest case is the one-at-a-time run (spread-2), stored after the shared one
    assert page.inner_text("#latest-run-notes").startswith("How these were measured (their runs' notes): One case at a time on the H100")
    _screenshot(page, "workload-timm-resnet50.png")
    page, problems3 = open_page(browser, live_server.url + "/workloads/bert_encoder/", viewport=WIDE)
    assert page.locator("#family-model").count() == 0
    assert problems == problems2 == problems3 == []


def test_dynamic_shows_the_family_gap_and_the_data_dependent_errors_that_block_it(browser, live_server, imported):
    page, problems = open_page(browser, live_server.url + "/dynamic/?machine=gpu-h100&mode=default&dtype=bfloat16", viewport=WIDE)
    family = page.locator("#family-gaps tr[data-suite=hf] td")
    # hf, backed and unbacked in bf16: 8 names; T5Small alone passed both (2.119 / 1.371 = 1.546,
    # the note's unbacked/backed); 6 failed, each on an unbacked symbol.
    assert family.all_inner_texts() == ["hf", "8", "1", "1.546", "6", "6"]
    assert page.locator("#family-gaps tr[data-suite]").count() == 1  # no core workload ran in bf16
    bert = page.locator("#dynamic-table tr", has=page.locator("a", has_text="hf:BertForMaskedLM")).filter(
        has_not_text="@").locator("td.blocker")
    text = bert.inner_text()
    assert text.startswith("data-dependent unbacked:") and "InductorError: AssertionError: failed OrderedSet([]) >= OrderedSet([u2])" in text
    roberta = page.locator("#dynamic-table tr", has=page.locator("a", has_text="hf:RobertaForCausalLM")).locator("td.blocker")
    assert "Cannot convert symbols to int" in roberta.inner_text()
    passed = page.locator("#dynamic-table tr", has=page.locator("a", has_text="hf:T5Small")).locator("td.blocker")
    assert passed.inner_text() == ""
    assert SHARED_NOTE in page.inner_text("#dynamic-run-notes")
    _screenshot(page, "dynamic-families.png")
    assert problems == []


def test_a_family_run_page_says_it_shared_the_gpu(browser, live_server, imported):
    run_id = json.loads(FAMILIES[0].read_text())["run"]["id"]
    page, problems = open_page(browser, live_server.url + f"/runs/{run_id}/", viewport=WIDE)
    assert "Imported sample data" in page.inner_text("#run-imported")
    notes = page.inner_text("#run-notes")
    assert notes.startswith("notes: partial: 6 of 12 cases") and SHARED_NOTE in notes
    assert problems == []
