"""Issue #27's noise rule on the quick start's pages (tests/dashboard/quickstart_data.py), looked at in
headless Chromium at 1400 px: home's class tables judge every coloured cell (speedup, compile time
cold and warm, memory compression) by the series' noise, so the cpu class's compile times (run-to-run
sd 27-74 %) are never green; the run page draws no error bar on a case too noisy to track and says
so; /compare/ and /ab/ grey what is within noise. Screenshots: /work/screens/s3/judge-*.png
(SCREENS_DIR to move them)."""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from dashboard.results.models import Run
from tests.dashboard.conftest import open_page
from tests.dashboard.quickstart_data import quickstart_database

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SCREENS = Path(os.environ.get("SCREENS_DIR", "/work/screens/s3"))
WIDE = {"width": 1400, "height": 1000}


def _shot(page, name: str) -> None:
    if SCREENS.is_dir():
        page.screenshot(path=str(SCREENS / f"judge-{name}.png"), full_page=True)


def test_quick_start_pages_colour_only_what_is_past_its_noise(browser, live_server, tmp_path):
    quickstart_database(tmp_path, detect=True)

    page, problems = open_page(browser, live_server.url + "/", viewport=WIDE)
    _shot(page, "home")
    cpu = page.locator("#class-cpu table.overview")
    headers = cpu.locator("thead th").all_inner_texts()
    for label in ("geomean speedup", "mean compile time, cold", "mean compile time, warm", "memory compression"):
        column = headers.index(label) + 1
        cells = cpu.locator(f"tbody tr td:nth-child({column})")
        assert cells.count() == 3
        tones = [c.get_attribute("class") for c in cells.all()]
        assert not [t for t in tones if "better" in t or "worse" in t], (label, tones)
    assert problems == []
    page.close()

    # The run page of the cpu class's newest run: no error bar on a case too noisy to track, its bar
    # says "too noisy"; the others keep theirs.
    run = Run.objects.filter(machine__machine_class="cpu").order_by("-build__ordered_at", "-ingested_at").first()
    page, problems = open_page(browser, f"{live_server.url}/runs/{run.id}/", viewport=WIDE)
    page.wait_for_selector("#speedup-chart[data-drawn=true]")
    _shot(page, "run")
    chart = page.evaluate("""() => document.getElementById('speedup-chart').data.map(t => ({
        note: t.text, plus: t.error_y.array.map(String), minus: t.error_y.arrayminus.map(String), y: t.y}))""")
    for t in chart:
        t["plus"], t["minus"] = [float(v) for v in t["plus"]], [float(v) for v in t["minus"]]
    noisy = [(t["plus"][i], t["minus"][i]) for t in chart for i, note in enumerate(t["note"]) if note]
    quiet = [t["plus"][i] for t in chart for i, note in enumerate(t["note"]) if not note and t["y"][i] is not None]
    assert noisy and all(math.isnan(plus) and math.isnan(minus) for plus, minus in noisy)
    drawn = page.evaluate("[...document.querySelectorAll('#speedup-chart g.errorbar path')].filter(p => p.getAttribute('d')).length")
    assert drawn == sum(y is not None for t in chart for y in t["y"]) - len(noisy)  # every passing case's but the too noisy ones
    assert quiet and any(plus > 0 for plus in quiet)
    assert page.locator("#speedup-chart text.bartext", has_text="too noisy").count() == len(noisy)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert problems == []
    page.close()

    # /compare/ on cpu: every timed cell is grey (the class's series move by half between releases).
    page, problems = open_page(browser, live_server.url + "/compare/?machine=cpu", viewport=WIDE)
    _shot(page, "compare")
    timed = page.locator("table.compare tbody td[data-metric='compile_time_warm_s'], "
                         "table.compare tbody td[data-metric='compile_time_cold_s'], table.compare tbody td[data-metric='speedup']")
    assert timed.count() > 20
    assert not [c for c in timed.evaluate_all("cells => cells.map(c => c.className)") if "better" in c or "worse" in c]
    assert page.locator("table.compare tbody td.too_noisy").count() > 20
    assert problems == []
    page.close()

    # The A/B page of the H100 sample's first variant: a change within its band is grey "no change".
    page, problems = open_page(browser, live_server.url + "/ab/", viewport=WIDE)
    href = page.locator("table a[href*='variant=']").first.get_attribute("href")
    page.close()
    page, problems = open_page(browser, live_server.url + href, viewport=WIDE)
    _shot(page, "ab")
    cells = page.locator("table.ab td.ab[data-metric='speedup']")
    tones = cells.evaluate_all("cells => cells.map(c => c.dataset.tone)")
    assert tones and set(tones) <= {"same", "better", "worse", "too_noisy", ""}
    for cell in page.locator("table.ab td.ab.same[data-metric='speedup']").all()[:5]:
        assert "no change" in cell.inner_text()
    assert problems == []
    page.close()

    # /dynamic/ on cpu: the compile-time ratios (13.26 -> 23.09 s and the like) are too noisy to track, not red or green.
    page, problems = open_page(browser, live_server.url + "/dynamic/?machine=cpu", viewport=WIDE)
    _shot(page, "dynamic")
    ratios = page.locator("#dynamic-table tbody tr td:nth-child(6)")
    assert ratios.count() == 9
    classes = ratios.evaluate_all("cells => cells.map(c => c.className)")
    assert not [c for c in classes if "better" in c or "worse" in c], classes
    assert ratios.filter(has_text="too noisy to track").count() == 7  # the seven where both regimes passed
    assert problems == []
    page.close()
