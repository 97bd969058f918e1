"""The compile CPU ratio (``--compile-reference``, issue #15 item 2) as a person reads it, on the real
H100 documents: the variant's compare against its base and the workload page's chart."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.dashboard.conftest import open_page

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
