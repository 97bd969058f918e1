"""The compile-time cells as a person reads them, now that the pages take cold and warm from the
metric registry (contract.metrics ``COMPILE_TIMES``): the workload page's latest figures, the run
page's rows and the workload page's compile chart, with a warm compile that is missing."""
from __future__ import annotations

import os

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.fixtures.browser import open_page
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _shot(page, name: str) -> None:
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], name), full_page=True)


def test_cold_and_warm_compile_read_in_one_cell_and_one_chart(browser, live_server):
    document = make_document(results=[
        make_result("mlp_loop", "static", compile_time_cold_s=12.3456, compile_time_warm_s=1.5),
        make_result("mlp_loop", "backed", compile_time_cold_s=8.0, compile_time_warm_s=None),
    ])
    run_ingest_and_detect(document=document)

    page, problems = open_page(browser, f"{live_server.url}/workloads/mlp_loop/", viewport={"width": 1400, "height": 900})
    _shot(page, "workload-compile-cells.png")
    header = page.locator("table.latest th").all_inner_texts()
    assert "compile cold / warm" in header
    column = header.index("compile cold / warm")
    cells = {}
    for row in page.locator("table.latest tbody tr").all():
        texts = row.locator("td").all_inner_texts()
        cells[texts[0]] = texts[column]
    assert cells == {"default · static · float32": "12.35 s / 1.50 s", "default · backed · float32": "8.00 s / –"}
    page.wait_for_selector("#series-compile .main-svg")
    lines = page.evaluate("() => document.getElementById('series-compile').data.filter(t => t.mode && t.mode.includes('lines'))"
                          ".map(t => [t.name, t.y])")
    assert lines == [["cold", [12.35]], ["warm", [1.5]]]  # the static series, opened by default
    assert problems == []

    page.goto(f"{live_server.url}/runs/{document['run']['id']}/")
    _shot(page, "run-compile-cells.png")
    column = page.locator("table.results th").all_inner_texts().index("compile cold / warm (s)")
    rows = page.locator("table.results tr.status-pass").all()
    assert sorted(row.locator("td").nth(column).inner_text() for row in rows) == ["12.35 / 1.50", "8.00 / –"]
