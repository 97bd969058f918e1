"""#34 / #30 item 2: a case's kept compile trace on its row of the run page and on the workload
page, in a real headless Chromium: the download link, its size, what the bound dropped, and the
tlparse command; a reference whose file is not here says so. With PTBENCH_SHOTS=<dir> the pages
are also saved as screenshots there."""
from __future__ import annotations

import gzip
import hashlib
import io

import pytest
from django.template.defaultfilters import filesizeformat

from dashboard.results.artifacts import artifact_store
from dashboard.results.services import run_ingest
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

BODY = gzip.compress(b'V1125 13:07:20.736000 1 x.py:1] {"str": ["x.py", 0]}\n' * 2000, mtime=0)
SHA = hashlib.sha256(BODY).hexdigest()
NAME = "mlp_loop-default-static-float32-cpu.torch_trace.log.gz"


def reference(sha: str, name: str, **extra) -> dict:
    return {"kind": "torch_trace", "name": name, "sha256": sha, "size_bytes": len(BODY) if sha == SHA else 12_345,
            "raw_bytes": 3_000_000, "max_bytes": 4 * 1024 * 1024, "dropped": [], "truncated_records": 0, **extra}


@pytest.fixture
def run_id(settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"
    kept = make_result("mlp_loop", "static")
    kept["artifact"] = reference(SHA, NAME, dropped=[{"kind": "describe_tensor", "records": 120, "bytes": 90_000}])
    pruned = make_result("mlp_loop", "backed")
    pruned["artifact"] = reference("e" * 64, "mlp_loop-default-backed-float32-cpu.torch_trace.log.gz")
    none = make_result("resnet_train", "static")
    outcome = run_ingest(document=make_document(results=[kept, pruned, none]))
    artifact_store(source=io.BytesIO(BODY), sha256=SHA, name=NAME)
    return outcome.run_id


def test_the_run_page_row_links_the_trace_with_its_size_and_the_tlparse_command(browser, live_server, run_id):
    page, problems = open_page(browser, f"{live_server.url}/runs/{run_id}/", viewport={"width": 1400, "height": 900})
    shot(page, "run-artifacts")
    block = page.locator(f'.artifact[data-sha256="{SHA}"]')
    assert block.is_visible()
    link = block.locator("a")
    assert link.inner_text() == NAME and link.get_attribute("href") == f"/artifacts/{SHA}/"
    assert block.locator(".artifact-size").inner_text() == filesizeformat(len(BODY))
    # Never an unbounded gunzip (issue #46 item 10): the command stops at ARTIFACT_MAX_EXPANDED_BYTES.
    assert block.locator("code.tlparse").inner_text() == (f"gzip -dc {NAME} | head -c 536870912 > {NAME.removesuffix('.gz')} "
                                                          f"&& tlparse {NAME.removesuffix('.gz')}")
    assert "kept within 4.0\xa0MB, dropped: describe_tensor (120)" in block.inner_text()
    missing = page.locator('.artifact.missing[data-sha256="' + "e" * 64 + '"]')
    assert missing.inner_text() == ("compile trace mlp_loop-default-backed-float32-cpu.torch_trace.log.gz (12.1\xa0KB): "
                                    "not on this dashboard (never uploaded, or pruned)")
    assert page.locator(".artifact").count() == 2  # resnet_train kept none: no block
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == NAME
    assert open(download.value.path(), "rb").read() == BODY
    assert problems == []


def test_the_workload_page_shows_the_latest_results_trace(browser, live_server, run_id):
    page, problems = open_page(browser, f"{live_server.url}/workloads/mlp_loop/?machine=cpu&mode=default&regime=static&dtype=float32",
                               viewport={"width": 1400, "height": 900})
    shot(page, "workload-artifact")
    block = page.locator(f'.artifact[data-sha256="{SHA}"]')
    assert block.locator("a").inner_text() == NAME
    assert block.locator("code.tlparse").inner_text().startswith("gzip -dc ")
    assert problems == []
