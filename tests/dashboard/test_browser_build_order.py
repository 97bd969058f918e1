"""Trends in a real headless Chromium: one x point per build, in build order, even when the
builds were ingested within one second (they are dated by their release, not by ingest)."""
from __future__ import annotations

import pytest

from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

IN_ORDER = ["2.11.0+cu130 · 70d99e9", "2.12.1+cu130 · 7269437", "2.13.0+cpu · cf30153"]


def xs(page, selector: str) -> list[list[str]]:
    page.wait_for_selector(f"{selector}[data-drawn=true]", timeout=15_000)
    return page.evaluate(f"Array.from(document.querySelector('{selector}').data, t => Array.from(t.x || []))")


def test_a_workload_trend_has_one_x_point_per_build_in_build_order(browser, live_server, releases):
    page, problems = open_page(browser, live_server.url + "/workloads/mlp_loop/?range=all")
    line = xs(page, "#series-speedup")[-1]
    assert line == IN_ORDER
    axis = page.evaluate("document.querySelector('#series-speedup')._fullLayout.xaxis.type")
    assert axis == "category"
    assert problems == []


def test_overview_and_dynamic_trends_follow_build_order_and_the_heatmap_has_cells(browser, live_server, releases):
    page, problems = open_page(browser, live_server.url + "/?range=all")
    assert all(x == IN_ORDER for x in xs(page, "#overview-trends"))
    page, more = open_page(browser, live_server.url + "/dynamic/?range=all")
    assert xs(page, "#dynamic-heatmap") == [IN_ORDER]
    z = page.evaluate("document.querySelector('#dynamic-heatmap').data[0].z")
    assert all(value is not None for row in z for value in row)
    assert problems == [] and more == []


def test_the_regressions_page_shows_the_newest_build_first(browser, live_server):
    from tests.dashboard.page_history import ref_for_day
    from tests.regressions.board_history import board_history

    board_history()
    page, problems = open_page(browser, live_server.url + "/regressions/?status=all&kind=all")
    first = page.locator("section.alert-summary").first
    assert first.get_attribute("data-build") == ref_for_day(3)
    assert first.locator("h2").inner_text().startswith(f"build {ref_for_day(3)}")
    first.locator("button.copy").first.click()
    assert page.evaluate("navigator.clipboard.readText()").startswith("python -m runner run")
    assert problems == []
