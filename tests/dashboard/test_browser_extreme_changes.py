"""#33 item 2: the regressions board in a real headless Chromium with changes at the extremes the
schema allows (a latency from 1e-300 ms to 5 ms, a suspect whose magnitude jsonb gives back as a
309-digit integer): the page answers 200, writes them compactly (+5e+302%, +∞) and still fits
its window (the ``change`` filter overflowed, or wrote three hundred digits)."""
from __future__ import annotations

import pytest

from dashboard.regressions.models import Regression, Remeasurement
from dashboard.results.models import Build, Series
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build, sha_for
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def extreme_findings():
    for day in (1, 2):
        ingest_build(day, [make_result(compiled_latency_ms=1e-300 if day == 1 else 5.0)])
    before, after = (Build.objects.get(git_sha=sha_for(day)) for day in (1, 2))
    Regression.objects.all().delete()
    Remeasurement.objects.all().delete()
    series = Series.objects.get()
    Regression.objects.create(series=series, first_bad_build=after, last_good_build=before, raised_build=after,
                              metric="compiled_latency_ms", finding="change_point", before_value=1e-300, after_value=5.0,
                              magnitude=5e300, confidence=0.99, details={"message": "from nothing to 5 ms", "noise": 0.01})
    Remeasurement.objects.create(series=series, metric="compiled_latency_ms", build=after, baseline_build=before,
                                 suspect={"before": 1e-300, "after": int("17" + "0" * 307), "noise": 0.01})


def test_extreme_changes_are_written_compactly_and_fit(browser, live_server, extreme_findings, tmp_path):
    page, problems = open_page(browser, live_server.url + "/regressions/?status=all&kind=all",
                               viewport={"width": 1400, "height": 900})
    page.screenshot(path=str(tmp_path / "regressions-extreme.png"), full_page=True)
    print("screenshot:", tmp_path / "regressions-extreme.png")
    board = page.inner_text("table.regressions")
    assert "+5e+302 %" in board
    assert "+∞" in page.inner_text("#remeasurements")
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert problems == []
