"""#34: the run page says why a run was measured (``Run.reason``), in a real headless Chromium. With
PTBENCH_SHOTS=<dir> the page is also saved as a screenshot there."""
from __future__ import annotations

import pytest

from dashboard.results.models import Run
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot
from tests.regressions.history import speedup_history

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_run_page_shows_the_reason(browser, live_server):
    nightly, bisection = speedup_history([1.25, 1.2])
    Run.objects.filter(pk=bisection.id).update(reason="bisection")
    page, problems = open_page(browser, f"{live_server.url}/runs/{bisection.id}/", viewport={"width": 1400, "height": 900})
    shot(page, "run-reason-bisection")
    reason = page.locator("#run-reason")
    assert reason.is_visible()
    assert reason.inner_text() == "reason: bisection: it places a change among old builds, and is no point of their series"
    assert reason.locator("strong").inner_text() == "bisection"
    page.goto(f"{live_server.url}/runs/{nightly.id}/", wait_until="networkidle")
    assert page.locator("#run-reason").inner_text() == "reason: nightly"
    assert problems == []
