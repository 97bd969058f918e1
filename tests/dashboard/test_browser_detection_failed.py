"""#34: a series whose detection failed is listed on the regressions page (build, run, series and
the error), in a real headless Chromium; a clean pass of detection takes it off. With
PTBENCH_SHOTS=<dir> the page is also saved as a screenshot there."""
from __future__ import annotations

import pytest

from dashboard.regressions.services import detection, detection_run
from dashboard.results.models import Series
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ref_for_day
from tests.dashboard.test_browser_noise_rule import shot
from tests.regressions.history import speedup_history

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_regressions_page_lists_a_failed_detection(browser, live_server, monkeypatch):
    runs = speedup_history([1.25] * 3, regimes=("static", "backed"))
    original = detection._deterministic_findings

    def fails_on_backed(*, series, **kwargs):
        if series.config.case_config.shape_regime == "backed":
            raise ZeroDivisionError("float division by zero")
        return original(series=series, **kwargs)

    for run in runs[:2]:
        detection_run(run_id=run.id)
    monkeypatch.setattr(detection, "_deterministic_findings", fails_on_backed)
    detection_run(run_id=runs[2].id)
    backed = Series.objects.get(config__tags__shape_regime="backed")

    page, problems = open_page(browser, f"{live_server.url}/regressions/", viewport={"width": 1400, "height": 900})
    shot(page, "regressions-detection-failed")
    section = page.locator("#detection-failed")
    assert section.is_visible() and "Detection failed" in section.locator("h2").inner_text()
    assert "verdict is error (detection_failed)" in section.locator("p").inner_text()
    rows = section.locator("table.detection-failures tbody tr")
    assert rows.count() == 1
    cells = [rows.locator("td").nth(i).inner_text() for i in range(6)]
    assert cells[0] == ref_for_day(3) and cells[1] == "cpu" and cells[2] == str(runs[2].id)[:8]
    assert cells[3] == backed.workload.name and cells[4] == str(backed.config)
    assert cells[5] == "ZeroDivisionError: float division by zero"
    assert problems == []

    monkeypatch.setattr(detection, "_deterministic_findings", original)
    detection_run(run_id=runs[2].id)
    page.reload(wait_until="networkidle")
    assert page.locator("#detection-failed").count() == 0
