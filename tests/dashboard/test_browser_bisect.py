"""Issue #31: the regression's page shows its bisection in progress and its result, in a real
headless Chromium at 1400 px (PTBENCH_SHOTS=<dir> saves the screenshots). The workers are played by
the test (tests/bisect/planted.py): six builds, the change planted in the third."""
from __future__ import annotations

import pytest

from dashboard.regressions.services.bisect import bisection_start
from tests.bisect.planted import SHAS, measure, no_broker, plant
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WIDE = {"width": 1400, "height": 900}


def roles(page) -> list[tuple[str, str, str]]:
    return [(row.get_attribute("data-index"), row.locator("td.role").inner_text(), row.locator("td.values").inner_text())
            for row in page.locator("table.bisection tr.bisect-row").all()]


def test_the_regression_page_shows_the_bisection_in_progress_then_its_culprit(browser, live_server, monkeypatch):
    no_broker(monkeypatch)
    regression = plant()
    url = f"{live_server.url}/regressions/{regression.id}/"
    page, problems = open_page(browser, url, viewport=WIDE)
    assert page.locator("#bisection-none").inner_text().startswith(f"Not bisected. Start one with python manage.py bisect {regression.id}")

    bisection = measure(bisection_start(regression=regression, requested_by="test"))  # the ends measured: build 3 next
    page.goto(url, wait_until="networkidle")
    shot(page, "bisect-in-progress")
    assert page.locator("#bisection .bisection-status").inner_text() == "running"
    summary = page.locator("#bisection > p").first.inner_text()
    assert "6 builds, 4 still between good and bad · 6 runs (2 open)" in summary and "this page reloads every 15 s" in summary
    rows = roles(page)
    assert [r[1] for r in rows] == ["good end", "–", "measuring", "–", "–", "bad end"]
    assert rows[0][2] == "1.98 · 2" and rows[5][2] == "3.03 · 2.97" and rows[2][2] == "–"
    assert page.locator('meta[http-equiv="refresh"]').count() == 1

    bisection = measure(bisection, rounds=3)
    assert bisection.status == "done"
    page.goto(url, wait_until="networkidle")
    shot(page, "bisect-done")
    assert page.locator("#bisection .bisection-status").inner_text() == "culprit found"
    assert [r[1] for r in roles(page)] == ["good end", "last good", "first bad", "–", "–", "bad end"]
    result = page.locator("#bisection-result").inner_text()
    assert result.startswith("first bad build 333333333333 (torch 2.13.0), last good 222222222222") and "2 steps, 8 runs" in result
    culprit = page.locator("#regression-culprit")
    assert culprit.inner_text() == ("culprit: 333333333333 (torch 2.13.0) · commits 222222222222...333333333333 · "
                                    "compare with 222222222222")
    assert culprit.locator("a").first.get_attribute("href") == f"https://github.com/pytorch/pytorch/compare/{SHAS[1]}...{SHAS[2]}"
    assert page.locator("#culprit-compare").get_attribute("href") == "/compare/?base=222222222222&head=333333333333&machine=cpu"
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    # The list links each finding to its page, and names the culprit.
    page.goto(f"{live_server.url}/regressions/?status=all", wait_until="networkidle")
    row = page.locator(f'tr.regression[data-id="{regression.id}"]')
    assert row.locator("div.culprit").inner_text() == "culprit 333333333333"
    row.locator("a.finding-link").click()
    page.wait_for_load_state("networkidle")
    assert page.url == url
    assert problems == []
