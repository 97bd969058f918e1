"""The noise rule and one set of numbers in a real headless Chromium (#27 items 2-3): an mlp_loop-like
series (launch-bound: its own speedup interval ±174 %) reads "too noisy to track", grey, on
/compare/ and the workload page where its change is within that noise (issue #42: past it, a change
is coloured and says why it is no finding), never green beside a red latency; a small change on a
quiet series is grey "within noise"; the speedup band never goes below zero; the regressions page
shows each finding's numbers as the API gives them, and a pending latency rise as +274.4 % worse.
With PTBENCH_SHOTS=<dir> each page is also saved as a screenshot there."""
from __future__ import annotations

import os

import pytest

from dashboard.regressions.models import Regression, Remeasurement
from dashboard.results.models import Build, Series
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build, ref_for_day, sha_for
from tests.dashboard.test_compare_noise import noisy_and_quiet_history
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
GREY = "rgb(243, 244, 246)"


def shot(page, name: str) -> None:
    if os.environ.get("PTBENCH_SHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SHOTS"], f"{name}.png"), full_page=True)


def test_compare_greys_a_too_noisy_series_and_a_change_within_noise(browser, live_server):
    # mlp_loop's head: 4.0x ±174 % (+100 %, within two runs of that noise: issue #42 colours only what is
    # past it), its latency +118 %; resnet_train +2 %: within noise
    noisy_and_quiet_history(results=[
        make_result("mlp_loop", "static", speedup=4.0, speedup_noise=1.74, compiled_latency_ms=4.36),
        make_result("resnet_train", "static", speedup=1.02)])
    page, problems = open_page(browser, f"{live_server.url}/compare/?base={ref_for_day(6)}&head={ref_for_day(7)}",
                               viewport={"width": 1400, "height": 900})
    shot(page, "compare")
    mlp = page.locator("#compare-table tr.case", has_text="mlp_loop")
    for metric in ("speedup", "compiled_latency_ms"):
        cell = mlp.locator(f"td[data-metric={metric}]")
        assert "too noisy to track" in cell.inner_text() and cell.get_attribute("class").split() == ["num", "too_noisy"]
        assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == GREY
    assert mlp.locator("td.worse, td.better").count() == 0  # no green +100 %, no red +118 %
    quiet = page.locator("#compare-table tr.case", has_text="resnet_train").locator("td[data-metric=speedup]")
    assert "+2.0%" in quiet.inner_text() and "within noise" in quiet.inner_text()
    assert quiet.evaluate("td => getComputedStyle(td).backgroundColor") == GREY
    # the geomean row leaves the too-noisy case out: resnet_train's +2 %, within noise (was green +133 %)
    summary = page.locator("#compare-table tr.summary td[data-metric=speedup]")
    assert "+2.0%" in summary.inner_text() and "within noise" in summary.inner_text()
    page.click("#compare-filters a[data-filter=improved]")
    page.wait_for_url("**filter=improved**")
    assert page.locator("#compare-table tr.case").count() == 0  # a too-noisy case is never "improved"
    assert problems == []


def test_the_workload_page_marks_a_too_noisy_speedup_and_its_band_stays_above_zero(browser, live_server):
    for day, (speedup, noise) in enumerate(((1.3, 0.02), (10.661, 1.74), (2.387, 8.34)), start=1):
        ingest_build(day, [make_result("mlp_loop", "static", speedup=speedup, speedup_noise=noise)])
    page, problems = open_page(browser, f"{live_server.url}/workloads/mlp_loop/?machine=cpu",
                               viewport={"width": 1400, "height": 900})
    shot(page, "workload")
    row = page.locator("table.latest tbody tr").first
    assert "2.387×" in row.inner_text() and "too noisy to track" in row.inner_text() and "±834" not in row.inner_text()
    assert "95 % interval 0.256–22.3×" in row.locator(".too-noisy").get_attribute("title")
    traces = page.evaluate("""() => document.getElementById('series-speedup').data
        .filter(t => t.hoverinfo === 'skip').map(t => t.y)""")
    assert len(traces) == 2  # the band's lower and upper edge
    low, high = traces
    # the quiet build's ±2 % as a ratio interval; none for the two too noisy to track (0.256..22.3 says nothing)
    assert low[0] == pytest.approx(1.3 / 1.02, rel=1e-3) and high[0] == pytest.approx(1.3 * 1.02, rel=1e-3)
    assert low[1:] == high[1:] == [None, None]
    assert page.evaluate("() => document.getElementById('series-speedup').layout.yaxis.range[1]") < 15  # not 30
    assert problems == []


def test_the_regressions_page_shows_the_apis_numbers_and_greys_a_too_noisy_finding(browser, live_server):
    for day in (1, 2, 3):
        ingest_build(day)
    Regression.objects.all().delete()
    builds = {day: Build.objects.get(git_sha=sha_for(day)) for day in (1, 2, 3)}
    series = Series.objects.get(machine_class="cpu", workload__name="mlp_loop", config__tags__shape_regime="static")
    common = {"series": series, "first_bad_build": builds[3], "last_good_build": builds[2], "raised_build": builds[3],
              "finding": "change_point"}
    quiet = Regression.objects.create(metric="speedup", kind="regression", before_value=1.25, after_value=1.1,
                                      magnitude=-0.12, confidence=0.999, details={"message": "speedup fell", "noise": 0.004},
                                      **common)
    noisy = Regression.objects.create(metric="compiled_latency_ms", kind="regression", before_value=0.6379,
                                      after_value=2.388, magnitude=-2.744, confidence=0.99,
                                      details={"message": "latency rose", "noise": 0.5}, **common)
    Remeasurement.objects.create(series=series, metric="compiled_latency_ms", build=builds[3], baseline_build=builds[2],
                                 suspect={"before": 0.6379, "after": 2.388, "magnitude": -2.744, "noise": 0.012})
    page, problems = open_page(browser, f"{live_server.url}/regressions/?status=all&kind=all",
                               viewport={"width": 1400, "height": 900})
    shot(page, "regressions")
    for finding in (quiet, noisy):
        api = page.request.get(f"{live_server.url}/api/v1/regressions/{finding.id}/").json()
        row = page.locator(f"tr.regression[data-id='{finding.id}']")
        assert row.locator("td.before-after").inner_text() == api["text"].split(" (")[0]
        assert row.locator("td.change").inner_text().startswith(api["change_text"])
        assert row.locator("td.confidence").inner_text() == api["confidence_text"]
    quiet_change = page.locator(f"tr.regression[data-id='{quiet.id}'] td.change")
    assert quiet_change.inner_text() == "-12.0 % worse ± 0.4 %" and "worse" in quiet_change.get_attribute("class").split()
    noisy_change = page.locator(f"tr.regression[data-id='{noisy.id}'] td.change")
    assert noisy_change.inner_text().startswith("+274.4 % too noisy to track")
    assert noisy_change.evaluate("td => getComputedStyle(td).backgroundColor") == GREY
    pending = page.locator("#remeasurements tbody tr").first.locator("td.change")
    assert pending.inner_text() == "+274.4 % worse ± 1.2 %"  # a latency rise: +, worse (was -274.4 %)
    assert problems == []


def test_the_ab_page_greys_a_variant_too_noisy_to_track(browser, live_server):
    from contract.variants import Overrides, variant_label
    from dashboard.results.services import run_ingest
    from tests.documents import make_document

    base = make_document(results=[make_result("mlp_loop", "static", speedup=1.3, speedup_noise=0.02),
                                  make_result("mlp_loop", "backed", speedup=1.25)])
    variant = make_document(results=[make_result("mlp_loop", "static", speedup=3.0, speedup_noise=1.74),  # ±174 %
                                     make_result("mlp_loop", "backed", speedup=1.6)])  # +28 %: past its noise
    overrides = Overrides.build({"inductor.coordinate_descent_tuning": True})
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    run_ingest(document=base)
    run_ingest(document=variant)
    ref = f"{base['build']['git_sha'][:12]}+{variant['build']['local_label']}"
    page, problems = open_page(browser, f"{live_server.url}/ab/?base={base['build']['git_sha'][:12]}&variant={ref}",
                               viewport={"width": 1400, "height": 900})
    shot(page, "ab")
    noisy = page.locator("table.ab tr.case", has_text="static").locator("td[data-metric=speedup]")
    assert "too noisy to track" in noisy.inner_text() and "too_noisy" in noisy.get_attribute("class").split()
    assert noisy.evaluate("td => getComputedStyle(td).backgroundColor") == GREY  # never green +131 %, within that noise
    past = page.locator("table.ab tr.case", has_text="backed").locator("td[data-metric=speedup]")
    assert "+28.0%" in past.inner_text() and "better" in past.get_attribute("class").split()
    assert problems == []
