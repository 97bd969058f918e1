"""The compile CPU ratio (``--compile-reference``, issue #15 item 2) as a person reads it, on the real
H100 documents: the variant's compare against its base and the workload page's chart."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
PAIRS = Path(__file__).resolve().parents[2] / "bench" / "results" / "compile-noise"


def test_the_variants_compile_cpu_ratio_reads_before_after_and_red_past_the_noise(browser, live_server):
    import json

    for name in ("h100-runner-pairs5-base-2026-11-24.json", "h100-runner-pairs5-cdt-2026-11-24.json"):
        run_ingest_and_detect(document=json.loads((PAIRS / name).read_text()))
    query = urlencode({"base": "70d99e998b49+cu130", "head": "70d99e998b49+cu130.coordinate_descent_tuning.6d3139",
                       "metric": "compile_cpu_ratio"})
    page, problems = open_page(browser, f"{live_server.url}/compare/?{query}")
    header = page.locator("#compare-table th").all_inner_texts()
    assert "compile CPU\nvs reference" in header or "compile CPU vs reference" in [h.replace("\n", " ") for h in header]
    bert = page.locator("#compare-table tr.case", has_text="bert_encoder").locator("td[data-metric=compile_cpu_ratio]")
    assert "1.008× → 1.170×" in bert.inner_text().replace("\n", " ") and "+16.1%" in bert.inner_text()
    assert "worse" in bert.get_attribute("class").split()
    masked = page.locator("#compare-table tr.case", has_text="masked_attention").locator("td[data-metric=compile_cpu_ratio]")
    assert "within noise" in masked.inner_text()  # +4.1 %

    page.goto(f"{live_server.url}/workloads/bert_encoder/")
    page.wait_for_selector("#series-compile-cpu .main-svg")
    points = page.evaluate("() => document.getElementById('series-compile-cpu').data.map(t => t.y.filter(v => v !== null).length)")
    assert sum(points) == 1  # the plain build's one point; variants are compared, not trended
    assert problems == []


def test_a_change_of_compile_reference_reads_reference_changed_not_a_regression(browser, live_server):
    # The real H100 base document twice, then the fleet's reference changes (torch 2.12, another sha,
    # method 2) and every ratio reads 1.3x: /compare/ (latest vs previous) shows no change of the build.
    import copy
    import json
    import os

    from bench.real_verdicts import replay

    base = json.loads((PAIRS / "h100-runner-pairs5-base-2026-11-24.json").read_text())
    moved = copy.deepcopy(base)
    for result in moved["results"]:
        result["environment"]["compile_pairs"]["reference"].update(torch="2.12.0+cu130", git_sha="ab" * 20)
        result["environment"]["compile_pairs"]["method"] = 2
        result["metrics"]["compile_cpu_ratio"] *= 1.3
    rows = replay([("base", [base]), ("base", [base]), ("new reference", [moved])])
    assert [r["default"] for r in rows] == ["pass", "pass", "pass"]

    page, problems = open_page(browser, f"{live_server.url}/compare/?metric=compile_cpu_ratio", viewport={"width": 1400, "height": 900})
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "compare-reference-changed.png"), full_page=True)
    cells = page.locator("#compare-table tr.case td[data-metric=compile_cpu_ratio]")
    assert cells.count() == 2
    for i in range(2):  # both values, and why no change is given
        text = " ".join(cells.nth(i).inner_text().split())
        assert text.endswith("reference changed") and "%" not in text and "within noise" not in text, text
        assert "worse" not in (cells.nth(i).get_attribute("class") or "").split()
    bert = page.locator("#compare-table tr.case", has_text="bert_encoder").locator("td[data-metric=compile_cpu_ratio]")
    assert " ".join(bert.inner_text().split()) == "1.008× → 1.310× reference changed"
    assert page.locator("#compare-table tr.case td.worse").count() == 0  # nothing else moved: the same documents
    assert problems == []
