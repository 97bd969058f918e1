"""Suite trends stay readable with many configurations (#42 item 10: 22 configurations of the H100
drew single dots under a legend whose ten colours repeated): no two configurations share a colour
and marker, the legend's rows stay above the charts, and a configuration measured on one build of
several says so in the legend."""
from __future__ import annotations

import os

import pytest

from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def test_twelve_configurations_each_look_different_and_a_lone_one_says_so(browser, live_server):
    every = [make_result("mlp_loop", regime, mode=mode) for mode in MODES for regime in ("static", "backed", "unbacked")]
    ingest_build(1, every[:-1])  # the last configuration is measured on the second build only
    ingest_build(2, every)
    page, problems = open_page(browser, live_server.url + "/", viewport={"width": 1400, "height": 900})
    page.wait_for_selector("#overview-trends[data-drawn=true]", timeout=15_000)
    looks = page.evaluate("""() => document.getElementById('overview-trends').data
        .filter(t => t.showlegend !== false).map(t => [t.name, t.marker.color, t.marker.symbol, t.line.dash])""")
    assert len(looks) == 12
    assert len({(color, symbol, dash) for _, color, symbol, dash in looks}) == 12  # ten colours, then other markers
    lone = [name for name, *_ in looks if name.endswith(" · 1 build")]
    assert lone == ["max-autotune-no-cudagraphs · unbacked · float32 · 1 build"]
    # The legend's rows end above the first chart's title.
    gap = page.evaluate("""() => {
      const el = document.getElementById('overview-trends');
      const legend = el.querySelector('.legend').getBoundingClientRect().bottom;
      const title = [...el.querySelectorAll('.annotation')].find(a => a.textContent === 'pass rate').getBoundingClientRect().top;
      return title - legend;
    }""")
    assert gap > 0, gap
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.locator("#overview-trends").screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "trends-12.png"))
    assert problems == []
