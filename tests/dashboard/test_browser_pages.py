"""Every page in a real headless Chromium (Debian's /usr/bin/chromium, never a downloaded one):
no console error, charts drawn, pickers and filters change the URL and the content, the compare
page's numbers are the stored ones, names with HTML stay text, pages work with JavaScript off."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from dashboard.results.models import Result, Run
from tests.dashboard.page_history import ingest_build, ref_for_day
from tests.fixtures.browser import open_page
from tests.documents import host_environment, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
EVIL = '<img src=x onerror="window.__pwned=1">'
NAMES = ["mlp_loop", "resnet_train", EVIL]


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def results(day: int, speedups: dict, **extra) -> list[dict]:
    return [
        make_result(name, regime, speedup=speedups.get((name, regime), 1.25), **extra)
        for name in NAMES
        for regime in ("static", "backed", "unbacked")
    ]


@pytest.fixture
def history():
    extra = [{"name": EVIL, "phase": "infer"}]
    ingest_build(1, results(1, {}), extra_workloads=extra)
    ingest_build(2, results(2, {("mlp_loop", "static"): 1.0, ("resnet_train", "unbacked"): 0.6}), extra_workloads=extra)
    last = ingest_build(3, results(3, {("mlp_loop", "static"): 0.9, ("resnet_train", "static"): 1.5}), extra_workloads=extra)
    return last


def test_every_page_loads_without_errors_and_draws_its_charts(browser, live_server, history):
    run_id = history["run"]["id"]
    pages = {
        "/": ["#overview-trends"],
        "/workloads/mlp_loop/": ["#series-speedup", "#series-latency", "#series-compile", "#series-breaks"],
        "/compare/": [],
        "/dynamic/": ["#dynamic-geomean", "#dynamic-heatmap"],
        f"/runs/{run_id}/": ["#speedup-chart"],
        "/regressions/?status=all&kind=all": [],
    }
    for path, charts in pages.items():
        page, problems = open_page(browser, live_server.url + path)
        for chart in charts:
            page.wait_for_selector(f"{chart}[data-drawn=true]", timeout=15_000)
            assert page.locator(f"{chart} .main-svg").count() >= 1, (path, chart)
        assert page.locator("h1").count() >= 1
        assert problems == [], (path, problems)
        page.context.close()


def test_overview_filters_and_range_change_the_url_and_the_content(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/")
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)
    assert page.locator("table.overview tbody tr").count() == 3

    with page.expect_navigation():
        page.select_option("#overview-filters select[name=regime]", "unbacked")
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)
    assert query(page)["regime"] == "unbacked" and "mode" not in query(page)  # empty pickers stay out of the URL
    assert page.locator("table.overview tbody tr").count() == 1
    assert "unbacked" in page.inner_text("table.overview tbody")
    legend = page.locator("#overview-trends .legendtext").all_text_contents()
    assert legend == ["default · unbacked · float32"]

    with page.expect_navigation():
        page.select_option("#overview-filters select[name=range]", "all")
    assert query(page) == {"machine": "cpu", "regime": "unbacked", "range": "all"}
    assert problems == []


def test_compare_numbers_are_the_stored_ones_and_pickers_filters_sorting_work(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/compare/")
    heading = page.inner_text("#compare-heading")
    assert f"base {ref_for_day(2)}" in heading and f"head {ref_for_day(3)}" in heading

    rows = page.locator("#compare-table tr.case")
    assert rows.count() == 9
    for i in range(rows.count()):
        row = rows.nth(i)
        old = Result.objects.get(pk=row.get_attribute("data-base"))
        new = Result.objects.get(pk=row.get_attribute("data-head"))
        assert row.locator("td").nth(0).inner_text() == old.workload.name == new.workload.name
        speedup = row.locator("td[data-metric=speedup]").inner_text()
        assert speedup.startswith(f"{old.speedup:.3f}× → {new.speedup:.3f}×"), speedup
        change = (new.speedup / old.speedup - 1) * 100
        if abs(change) >= 0.05:
            assert f"{change:+.1f}%" in speedup
        cold = row.locator("td[data-metric=compile_time_cold_s]").inner_text()
        assert cold.startswith(f"{old.compile_time_cold_s:.2f} s → {new.compile_time_cold_s:.2f} s")

    # The build picker: base = day 1.
    with page.expect_navigation():
        page.select_option("#pick-base", ref_for_day(1))
    assert query(page)["base"] == ref_for_day(1) and query(page)["head"] == ref_for_day(3)
    assert f"base {ref_for_day(1)}" in page.inner_text("#compare-heading")
    mlp_static = page.locator("#compare-table tr.case", has_text="mlp_loop").filter(has_text="default · static")
    assert mlp_static.locator("td[data-metric=speedup]").inner_text().startswith("1.250× → 0.900×")

    # Filter: regressed, then sort by speedup change, descending.
    page.click("#compare-filters a[data-filter=regressed]")
    page.wait_for_load_state("networkidle")
    assert query(page)["filter"] == "regressed"
    assert [t.split("\n")[0] for t in page.locator("#compare-table tr.case td:first-child").all_inner_texts()] == ["mlp_loop"]
    page.click("#compare-filters a[data-filter=all]")
    page.click("#compare-table th a[data-sort=speedup]")
    page.wait_for_load_state("networkidle")
    page.click("#compare-table th a[data-sort=speedup]")
    page.wait_for_load_state("networkidle")
    assert query(page)["sort"] == "speedup" and query(page)["dir"] == "desc"
    first = page.locator("#compare-table tr.case").first
    assert "resnet_train" in first.inner_text() and "+20.0%" in first.inner_text()  # against day 1 now
    assert problems == []


def test_a_workload_name_with_html_is_shown_as_text(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/")
    link = page.get_by_role("link", name=EVIL)
    assert link.count() == 1
    link.click()
    page.wait_for_selector("#series-speedup[data-drawn=true]", timeout=15_000)
    assert page.inner_text("h1.workload-name") == EVIL
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main img").count() == 0
    compare, _ = open_page(browser, live_server.url + "/compare/")
    assert EVIL in compare.inner_text("#compare-table") and compare.evaluate("window.__pwned") is None
    assert problems == []


def test_the_speedup_trend_circles_builds_measured_on_a_slowed_host(browser, live_server):
    for day, probe_ms in enumerate([0.95, 0.95, 0.96, 1.2], start=1):
        result = make_result("resnet_train", "static", speedup=1.5 if probe_ms < 1 else 1.2)
        result["environment"] = host_environment(0.98, probe_ms)
        ingest_build(day, [result])
    page, problems = open_page(browser, live_server.url + "/workloads/resnet_train/?range=all")
    page.wait_for_selector("#series-speedup[data-drawn=true]", timeout=15_000)
    legend = page.locator("#series-speedup .legend .legendtext").all_text_contents()
    assert "host slowed" in legend and "speedup" in legend
    assert "host slowed" not in page.locator("#series-compile .legend .legendtext").all_text_contents()
    assert problems == []


def test_workload_pickers_and_the_repro_copy_button(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/workloads/resnet_train/")
    page.wait_for_selector("#series-speedup[data-drawn=true]", timeout=15_000)
    assert page.locator("#series-speedup .scatterlayer .trace").count() >= 2  # the noise band and the line

    with page.expect_navigation():
        page.select_option("#workload-pickers select[name=regime]", "unbacked")
    page.wait_for_selector("#series-speedup[data-drawn=true]", timeout=15_000)
    assert query(page)["regime"] == "unbacked"
    assert "default · unbacked · float32 on cpu" in page.inner_text("#series h2")
    assert "--regimes unbacked" in page.inner_text("#repro-command")

    page.click("button.copy")
    page.wait_for_selector("button.copy[data-copied=true]")
    assert "--regimes unbacked" in page.evaluate("navigator.clipboard.readText()")
    assert problems == []


def test_dynamic_page_highlights_gaps_and_the_build_picker_moves(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/dynamic/")
    page.wait_for_selector("#dynamic-heatmap[data-drawn=true]", timeout=15_000)
    with page.expect_navigation():
        page.select_option("#pick-build", ref_for_day(2))
    assert query(page)["build"] == ref_for_day(2)
    assert f"Build {ref_for_day(2)}" in page.inner_text("#dynamic-build")
    highlighted = page.locator("#dynamic-table tr.gap")
    assert highlighted.count() == 1 and "resnet_train" in highlighted.inner_text() and "0.480" in highlighted.inner_text()
    assert problems == []


def test_pages_work_with_javascript_off(browser, live_server, history):
    page, problems = open_page(browser, live_server.url + "/compare/", javascript=False)
    assert page.locator("#compare-table tr.case").count() == 9
    page.select_option("#pick-base", ref_for_day(1))
    with page.expect_navigation():
        page.click("#compare-pickers button[type=submit]")
    assert query(page)["base"] == ref_for_day(1)
    assert f"base {ref_for_day(1)}" in page.inner_text("#compare-heading")
    page.goto(live_server.url + "/")
    assert page.locator("table.overview tbody tr").count() == 3
    page.goto(live_server.url + "/workloads/mlp_loop/")
    assert page.locator("table.reasons").count() == 1 and page.locator("#repro-command").count() == 1
    run = Run.objects.order_by("-ingested_at").first()
    page.goto(f"{live_server.url}/runs/{run.id}/")
    assert re.search(r"completed", page.inner_text("#run-progress"))
    assert problems == []
