"""A compiled case slower than eager names its likeliest cause from its kernel profile on the workload
page (#42 item 9): compiled hf:BertForMaskedLM at 0.556x on an H100 looked like a bug in the tool; the
stored profile says attention fell back from cuDNN's fused kernel to float32 GEMMs. The real H100
document, imported as the quick start imports it, in headless Chromium at 1400 px."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from tests.fixtures.browser import open_page

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
STORED = Path(__file__).resolve().parents[2] / "bench" / "results" / "families" / "h100-2026-11-28" / "h100-1-hf-static-cost.json"


def test_the_workload_page_says_why_compiled_bert_is_slower_than_eager(browser, live_server):
    call_command("ingest", "--imported", "-v", "0", str(STORED))
    page, problems = open_page(browser, f"{live_server.url}/workloads/hf:BertForMaskedLM/?machine=gpu-h100",
                               viewport={"width": 1400, "height": 900})
    banner = page.locator("#slower-than-eager")
    assert banner.get_attribute("data-kind") == "attention"
    text = banner.inner_text()
    assert text.startswith("Compiled runs slower than eager here (0.5")
    assert "attention left its fused kernel: eager runs aten::_cudnn_attention_forward" in text
    assert "float32 GEMMs on CUDA cores in this bfloat16 case" in text
    # the latest table's row says it in short, beside its speedup
    assert page.locator("table.latest tr.selected .slower-cause").inner_text() == "attention left its fused kernel"
    assert problems == []
