"""The home page (overview) in a real headless Chromium (Debian's, never a downloaded browser)."""
from __future__ import annotations

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.dashboard.conftest import open_page
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_home_page_draws_the_chart_without_errors(browser, live_server):
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
