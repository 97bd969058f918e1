"""The home page (overview) in a real headless Chromium (Debian's, never a downloaded browser)."""
from __future__ import annotations

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.fixtures.browser import open_page
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_home_page_draws_the_chart_without_errors(browser, live_server):
    run_ingest_and_detect(document=make_document(git_sha="ab" * 20))
    first, first_problems = open_page(browser, live_server.url + "/")
    # One build: a column of single dots is no trend; the page says so instead of drawing one.
    assert "One build on cpu in this range (abababababab): a trend needs two" in first.inner_text("#trend-single-build")
    assert first.locator("#overview-trends").count() == 0 and first_problems == []
    document = make_document()
    run_ingest_and_detect(document=document)

    page, problems = open_page(browser, live_server.url + "/")
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)

    assert problems == []
    assert page.locator("#overview-trends .legendtext").count() == 3  # one line per configuration
    assert "cpu: build cf30153c4c13" in page.inner_text("#class-cpu h2")
    page.click(f"a[href='/runs/{document['run']['id']}/']")
    page.wait_for_selector("#speedup-chart[data-drawn=true]", timeout=15_000)
    bars = page.locator("#speedup-chart g.point")
    assert bars.count() == 6  # 2 workloads x 3 regimes
    assert page.locator("table.results tbody tr").count() == 6
    assert problems == []
