"""The home page (overview) in a real headless Chromium (Debian's, never a downloaded browser)."""
from __future__ import annotations

import os

import pytest

from dashboard.results.services import run_ingest
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; Django's ORM calls in the test are
    # still synchronous, so tell Django not to refuse them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )
        try:
            yield browser
        finally:
            browser.close()
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


def open_page(browser, url: str):
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url}"))
    page.on("response", lambda resp: problems.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
    page.goto(url, wait_until="networkidle")
    return page, problems


def test_home_page_draws_the_chart_without_errors(browser, live_server):
    document = make_document()
    run_ingest(document=document)

    page, problems = open_page(browser, live_server.url + "/")
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)

    assert problems == []
    assert page.locator("#overview-trends .legendtext").count() == 3  # one line per configuration
    assert "cpu: build cf30153c4c13" in page.inner_text("h1")
    page.click(f"a[href='/runs/{document['run']['id']}/']")
    page.wait_for_selector("#speedup-chart[data-drawn=true]", timeout=15_000)
    bars = page.locator("#speedup-chart g.point")
    assert bars.count() == 6  # 2 workloads x 3 regimes
    assert page.locator("table.results tbody tr").count() == 6
    assert problems == []
