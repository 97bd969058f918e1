"""One commit stored twice (the quick start's local build beside the imported sample of the same
sha, issue #27 item 1) in a real headless Chromium: the home page colours no change and /compare/
says "same build: nothing to compare"."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from dashboard.pipeline.services import run_ingest_and_detect
from tests.fixtures.browser import open_page
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
REF = "cf30153c4c13+cpu"


def stored(speedup: float, *, imported: bool) -> None:
    document = make_document(results=[make_result("mlp_loop", r, speedup=speedup, compiled_latency_ms=2.5 / speedup)
                                      for r in ("static", "backed")])
    document["build"].update(local_label="cpu")
    run_ingest_and_detect(document=document, imported=imported)


def test_the_same_commit_imported_and_measured_here_is_not_a_change(browser, live_server, tmp_path):
    shots = Path(os.environ.get("PTBENCH_SCREENSHOTS") or tmp_path)  # to look at them
    stored(1.25, imported=True)
    stored(2.99, imported=False)  # +139 %: another host's speed, not a change of the build

    page, problems = open_page(browser, f"{live_server.url}/", viewport={"width": 1400, "height": 1000})
    page.screenshot(path=str(shots / "same-build-home.png"), full_page=True)
    block = page.locator("#class-cpu")
    assert block.locator("h2").inner_text().startswith(f"cpu: build {REF} ")
    assert "same build: another measurement of" in block.inner_text() and "nothing to compare" in block.inner_text()
    assert block.locator("td.worse, td.better").count() == 0 and "+139" not in block.inner_text()

    page, more = open_page(browser, f"{live_server.url}/compare/?machine=cpu&head={REF}",
                           viewport={"width": 1400, "height": 1000})
    page.screenshot(path=str(shots / "same-build-compare.png"), full_page=True)
    said = page.locator("#compare-same-build").inner_text()
    assert said == (f"same build: nothing to compare ({REF} and {REF}.imported: the same commit). "
                    "Pick another base or head.")
    assert page.locator("#compare-table").count() == 0 and page.locator("td.worse, td.better").count() == 0

    page, named = open_page(browser, f"{live_server.url}/compare/?machine=cpu&base={REF}.imported&head={REF}")
    assert page.locator("#compare-same-build").inner_text().startswith("same build: nothing to compare")
    assert problems == more == named == []
