"""The quick start's sample links at least one "what changed" page that shows the kernel profile, the
compile phases and the generated code's diff (#42 item 4): none of the 65 its pages linked did, as
no linked pair had a kernel profile on both sides. The H100 proof's documents (bench/results/explain,
bert_encoder on the A/B page's base build and its max_fusion_size=1 variant, each with phases, a
profile and its kernels' code) are imported last by scripts/quickstart.sh, so the A/B page's
bert_encoder row links them. Here: the quick start's own import list, the documents of that one
pair in its order (the history the A/B page reads, then the proof), the page in headless Chromium."""
from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
PAIR = ("history/hist-base-1.json", "history/hist-fusion-1.json", "explain/h100-plain-2026-11-25.json",
        "explain/h100-fusion1-2026-11-25.json")


def quickstart_imports() -> list[str]:
    """The files scripts/quickstart.sh imports, in its order (its globs expanded as bash sorts them)."""
    script = (ROOT / "scripts" / "quickstart.sh").read_text()
    command = re.search(r"manage\.py ingest --imported(.*?)\n(?!\s)", script, re.S).group(1)
    patterns = [word for word in command.split() if word.startswith("bench/results/")]
    return [str(Path(path).relative_to(ROOT / "bench" / "results")) for pattern in patterns
            for path in sorted(glob.glob(str(ROOT / pattern)))]


def test_the_quick_start_imports_the_h100_proof_after_the_history_it_pairs_with():
    imported = quickstart_imports()
    assert all(name in imported for name in PAIR)
    # the proof after the history: its results, stored last, are the ones the A/B page pairs
    assert max(imported.index(name) for name in PAIR[:2]) < min(imported.index(name) for name in PAIR[2:])


def test_the_ab_pages_bert_encoder_row_links_kernels_phases_and_code(browser, live_server):
    call_command("ingest", "--imported", "-v", "0", *(str(ROOT / "bench" / "results" / name) for name in PAIR))
    page, problems = open_page(browser, f"{live_server.url}/ab/?variant=70d99e998b49%2Bcu130.max_fusion_size-1.d3c0cc.imported",
                               viewport={"width": 1400, "height": 900})
    row = page.locator("tr", has_text="bert_encoder").filter(has=page.locator("a.explain-link")).first
    row.locator("a.explain-link").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text().startswith("What changed: bert_encoder")
    assert page.locator("#explain-phases tr.phase").count() >= 8  # cold and warm compiles, by phase
    kernels = page.locator("#explain-kernels tr.kernel")
    assert kernels.count() >= 10 and page.locator("#explain-kernels tr.kernel[data-status='new']").count() >= 1
    assert page.locator("#explain-kernels tr.kernel-diff").count() >= 1  # the generated code, before | after
    assert "fused differently" in page.locator("#explain-cause").inner_text()
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "quickstart-explain.png"), full_page=True)
    assert problems == []
