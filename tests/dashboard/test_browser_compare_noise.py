"""/compare/ in a real headless Chromium: every timed column judged against its series' noise, as on
the A/B page (#17): grey "within noise" inside it, red past it, and the "regressed" filter finds
exactly the red cells."""
from __future__ import annotations

import pytest

from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ref_for_day
from tests.dashboard.test_compare_noise import noisy_and_quiet_history
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_compile_time_within_its_noise_is_grey_and_latency_past_it_is_red(browser, live_server):
    # mlp_loop's compile time moves 15 % from build to build: +8 % is within its noise.
    # resnet_train's latency never moves: +20 % is past it.
    noisy_and_quiet_history(results=[make_result("mlp_loop", "static", speedup=2.0, compile_time_cold_s=8.1),
                                     make_result("resnet_train", "static", speedup=1.0, compiled_latency_ms=2.4)])
    url = f"{live_server.url}/compare/?base={ref_for_day(6)}&head={ref_for_day(7)}"

    page, problems = open_page(browser, url + "&metric=compile_time_cold_s")
    cell = page.locator("#compare-table tr.case", has_text="mlp_loop").locator("td[data-metric=compile_time_cold_s]")
    assert "+8.0%" in cell.inner_text() and "within noise" in cell.inner_text()
    assert cell.get_attribute("class").split() == ["num", "same"]
    assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == "rgb(243, 244, 246)"  # grey
    mlp = page.locator("#compare-table tr.case", has_text="mlp_loop")
    assert mlp.locator("td.worse, td.better").count() == 0  # its only change, grey
    page.click("#compare-filters a[data-filter=regressed]")
    page.wait_for_url("**filter=regressed**")
    assert page.locator("#compare-table tr.case").count() == 0
    assert "regressed (0)" in page.inner_text("#compare-filters")

    page.goto(url + "&metric=compiled_latency_ms")
    cell = page.locator("#compare-table tr.case", has_text="resnet_train").locator("td[data-metric=compiled_latency_ms]")
    assert "+20.0%" in cell.inner_text() and "worse" in cell.get_attribute("class").split()
    assert page.locator("#compare-table td.worse").count() == 1  # the one red cell
    page.click("#compare-filters a[data-filter=regressed]")
    page.wait_for_url("**filter=regressed**")
    assert [t.split("\n")[0] for t in page.locator("#compare-table tr.case td:first-child").all_inner_texts()] == ["resnet_train"]

    # A column neither build measured in any case ("– → –" on every row) is left out and named above
    # the table; every column shown has a figure somewhere; the metric judged by is always a column.
    page.goto(url)
    shown = page.locator("#compare-table th a[data-sort]").evaluate_all("links => links.map(a => a.dataset.sort)")
    unmeasured = page.inner_text("#compare-unmeasured")
    assert "compile CPU vs reference" in unmeasured and "compile_cpu_ratio" not in shown
    for name in shown[3:]:
        cells = page.locator(f"#compare-table tr.case td[data-metric={name}]").all_inner_texts()
        assert any(text.split("\n")[0] != "– → –" for text in cells), name
    assert len(page.locator("#compare-table tr.case").first.locator("td").all()) == len(shown)
    page.goto(url + "&metric=compile_cpu_ratio")
    assert "compile_cpu_ratio" in page.locator("#compare-table th a[data-sort]").evaluate_all("links => links.map(a => a.dataset.sort)")
    assert "compile CPU vs reference" not in " ".join(page.locator("#compare-unmeasured").all_inner_texts())
    assert problems == []
