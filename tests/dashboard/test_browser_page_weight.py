"""What a first visit weighs, served as the quick start serves it (runserver: WhiteNoise finds the
static files and sends a committed ``.gz`` beside one when the browser accepts gzip), and every chart
still drawn by the cartesian Plotly bundle (docs/benchmarks.md, dashboard/web/static/vendor/README.md)."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from django.test.testcases import LiveServerThread

from dashboard.results.models import Run
from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "dashboard" / "web" / "static" / "vendor"
FIRST_VISIT_LIMIT = 1_500_000  # bytes on the wire: headers and encoded bodies


@pytest.fixture
def builds(releases):
    """Three builds (test_browser_build_order's): the id of a run."""
    return str(Run.objects.values_list("id", flat=True).first())


@pytest.fixture
def runserver_like(settings):
    """A live server whose static files go through WhiteNoise's middleware with finders and
    autorefresh, as under ``manage.py runserver`` with DEBUG (pytest-django's live_server serves
    them through Django's StaticFilesHandler instead, which never sends a compressed body)."""
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    thread = LiveServerThread("localhost", static_handler=lambda app: app, connections_override={})
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    try:
        yield f"http://localhost:{thread.port}"
    finally:
        thread.terminate()


def weigh(browser, url: str):
    """The page at ``url`` in a fresh context (empty cache), and the bytes each response took."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    finished = []
    page.on("requestfinished", lambda request: finished.append(request))
    page.goto(url, wait_until="networkidle")
    sizes = {}
    for request in finished:
        size = request.sizes()
        sizes[request.url] = size["responseHeadersSize"] + size["responseBodySize"]
    return page, sizes


def test_the_vendored_bundle_and_its_gzip_are_the_same_file():
    bundle = (VENDOR / "plotly.min.js").read_bytes()
    assert gzip.decompress((VENDOR / "plotly.min.js.gz").read_bytes()) == bundle
    assert b"plotly.js (cartesian - minified) v4.1.1" in bundle[:200]
    assert len(bundle) < 5_000_000


def test_a_first_visit_to_the_home_page_weighs_under_1_5_mb(browser, runserver_like, builds):
    page, sizes = weigh(browser, runserver_like + "/?range=all")
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)
    total = sum(sizes.values())
    plotly = [size for url, size in sizes.items() if "/static/vendor/plotly.min.js" in url]
    print(f"first visit to /: {total} bytes in {len(sizes)} responses; plotly {plotly}")
    assert plotly and plotly[0] < 600_000  # sent gzipped (1.5 MB plain)
    # Nothing from elsewhere: the bundle's only CDN address is plotly's topojsonURL default, used by
    # geo traces, which the cartesian bundle does not have.
    assert [url for url in sizes if not url.startswith(runserver_like)] == []
    assert total < FIRST_VISIT_LIMIT, sorted(sizes.items(), key=lambda kv: -kv[1])[:5]


def test_the_first_visit_benchmark_weighs_the_same_page(runserver_like, builds):
    """bench/first_visit.py (the README's page weight) run as a user runs it, against a live server."""
    done = subprocess.run([sys.executable, "-m", "bench.first_visit", runserver_like + "/?range=all"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [line for line in done.stdout.splitlines() if line.endswith(" responses") and "first visit" in line]
    total = int(line.split()[0].replace(",", ""))
    assert "plotly.min.js" in done.stdout and 100_000 < total < FIRST_VISIT_LIMIT, done.stdout[-1500:]


@pytest.mark.parametrize(("path", "charts"), [
    ("/?range=all", ["#overview-trends"]),
    ("/workloads/mlp_loop/?range=all", ["#series-speedup"]),
    ("/dynamic/?range=all", ["#dynamic-geomean", "#dynamic-heatmap"]),
    ("/compare/", []),  # a table: it draws no chart
    ("/runs/{run}/", ["#speedup-chart"]),
])
def test_every_chart_still_draws_with_the_cartesian_bundle(browser, live_server, builds, path, charts):
    page, problems = open_page(browser, live_server.url + path.format(run=builds), viewport={"width": 1400, "height": 900})
    for chart in charts:
        page.wait_for_selector(f"{chart}[data-drawn=true]", timeout=15_000)
        assert page.locator(f"{chart} svg.main-svg").count() >= 1
        marks = ", ".join(f"{chart} .overplot {mark}" for mark in ("path.point", "path.js-line", "g.point path", "g.hm image"))
        assert page.locator(marks).count() >= 1  # points, lines, bars or the heatmap's image
    assert page.locator(".plot:not([data-drawn=true])").count() == 0
    assert problems == []
