"""A finding's own page, ``/regressions/<id>/`` (#42 item 5), in headless Chromium at 1400 px: it
carries everything the board row has and more. A case that started failing: its title says so with
both statuses, the whole error (not cut at "..."), the "what changed" link whose page shows the
status and the error, the repro, and the chart of the series with the first bad build marked. A
new graph-break reason at a lower count: titled by the reason, its counts read as counts (2 -> 1,
better), the reason named instead of a bare "worse"."""
from __future__ import annotations

import os

import pytest

from dashboard.regressions.models import Regression
from dashboard.regressions.services import detection_run
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WIDE = {"width": 1400, "height": 900}
END = "the last line of a long error"
ERROR = {"type": "InductorError", "message": "LoweringException: GuardOnDataDependentSymNode: Could not guard on Eq(u0, 1)\n"
         + "  target: aten.bmm.default\n" * 150 + END}


def _breaks(reason: str, count: int) -> dict:
    result = make_result("resnet_train", "static", graph_break_count=count)
    result["graph_breaks"] = [{"reason": reason, "location": "model.py:12", "count": count}]
    return result


@pytest.fixture
def findings():
    failed = make_result("mlp_loop", "static", status="compile_error", speedup=None)
    failed["error"] = ERROR
    for day, results in ((1, [make_result("mlp_loop", "static"), _breaks("Tensor.item", 2)]),
                         (2, [make_result("mlp_loop", "static"), _breaks("Tensor.item", 2)]),
                         (3, [failed, _breaks("Data-dependent branching\n  Explanation: a branch on a tensor's value", 1)])):
        detection_run(run_id=ingest_build(day, results)["run"]["id"])  # as the pipeline's worker would
    return {r.finding: r for r in Regression.objects.all()}


def _shot(page, name: str) -> None:
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], name), full_page=True)


def test_a_case_that_started_failing_shows_the_status_the_whole_error_the_chart_and_what_changed(browser, live_server, findings):
    finding = findings["started_failing"]
    page, problems = open_page(browser, f"{live_server.url}/regressions/{finding.id}/", viewport=WIDE)
    assert page.locator("#finding-title").inner_text() == "mlp_loop started failing: pass → compile_error"
    assert page.title().startswith("mlp_loop started failing")
    error = page.locator("#finding-error")
    assert error.get_attribute("open") is not None and error.locator("pre").inner_text().endswith(END)  # whole, not cut
    assert "pass → compile_error" in page.locator("#finding-cause").inner_text()
    assert page.locator("#repro-command").inner_text().startswith("python -m runner run")
    chart = page.locator("#series-speedup")
    chart.locator(".main-svg").first.wait_for()
    assert chart.get_attribute("data-drawn") == "true"
    # the last good and first bad builds marked on the chart, named
    assert {"last good", "first bad"} <= {t.strip() for t in chart.locator(".annotation-text").evaluate_all("els => els.map(e => e.textContent)")}
    _shot(page, "finding-started-failing.png")
    page.locator("#explain-link").click()
    page.wait_for_load_state()
    assert "pass -> compile_error: InductorError: LoweringException" in page.locator("#explain-cause").inner_text()
    assert "No single cause" not in page.locator("#explain-cause").inner_text()
    assert page.locator("#explain-status").get_attribute("data-after") == "compile_error"
    assert page.locator("#explain-error pre").inner_text().endswith(END)
    assert problems == []


def test_a_new_graph_break_reason_at_fewer_breaks_names_the_reason_and_reads_fewer_as_better(browser, live_server, findings):
    finding = findings["new_graph_break"]
    page, problems = open_page(browser, f"{live_server.url}/regressions/{finding.id}/", viewport=WIDE)
    assert page.locator("#finding-title").inner_text() == "resnet_train: new graph-break reason “Data-dependent branching”"
    assert page.locator("#regression-numbers").inner_text() == "2 → 1"
    change = page.locator("#regression-change")
    assert change.inner_text() == "-50.0 % better · new reason: Data-dependent branching"
    assert "better" in change.get_attribute("class").split()  # green, as /compare/ colours fewer breaks
    assert "a branch on a tensor's value" in page.locator("details.reason-text pre").inner_text()  # the reason whole
    page.wait_for_selector("#series-breaks[data-drawn=true]", timeout=15_000)
    # the finding's triangle sits on its own line: graph breaks at 1 (not the chart's first line by chance)
    marked = page.evaluate("document.getElementById('series-breaks').data.filter(t => t.name === 'detected change').map(t => t.y)")
    assert marked == [[1]]
    _shot(page, "finding-new-graph-break.png")
    # the board row says the same
    board, board_problems = open_page(browser, f"{live_server.url}/regressions/?status=all", viewport=WIDE)
    row = board.locator(f'tr.regression[data-id="{finding.id}"]')
    assert row.locator("td.change").inner_text() == "-50.0 % better · new reason: Data-dependent branching"
    assert problems == board_problems == []
