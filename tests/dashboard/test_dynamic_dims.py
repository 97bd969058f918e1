"""Regime dims on the dashboard (docs/case-config.md): a result whose configuration names dims is its
own configuration (key, tags, label), and /dynamic/ pairs backed with unbacked only within the same
dims: every declared dim by default, ``?dims=batch`` the batch-only pair. In a real headless
Chromium too (PTBENCH_SHOTS=<dir> saves the screenshot)."""
from __future__ import annotations

import pytest

from dashboard.results.models import Config, Result
from contract import document as run_document
from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import make_document, make_result
from tests.dashboard.conftest import open_page
from tests.dashboard.page_history import ingest_build
from tests.dashboard.test_browser_noise_rule import shot
from tests.dashboard.test_dynamic import pair, table_rows

VIEW = {"width": 1400, "height": 900}


def with_dims(results: list[dict], dims: list[str]) -> list[dict]:
    for result in results:
        result["config"]["dims"] = dims
    return results


def history() -> None:
    # Every declared dim: unbacked as fast as backed. Batch only: unbacked half as fast.
    ingest_build(1, pair("mlp_loop", 2.0, 2.0) + with_dims(pair("mlp_loop", 2.0, 1.0), ["batch"]))


@pytest.mark.django_db
def test_a_dims_configuration_is_stored_as_its_own_and_keys_without_dims_are_unchanged():
    history()
    keys = sorted(Config.objects.values_list("key", flat=True))
    assert keys == ["default/backed/float32/cpu", "default/backed/float32/cpu/dims=batch",
                    "default/unbacked/float32/cpu", "default/unbacked/float32/cpu/dims=batch"]
    config = Config.objects.get(key="default/unbacked/float32/cpu/dims=batch")
    assert config.tags["dims"] == ["batch"] and "dims" not in Config.objects.get(key="default/unbacked/float32/cpu").tags


@pytest.mark.django_db
@pytest.mark.parametrize("regime, dims", [("unbacked", ["a/b"]), ("unbacked", []), ("backed", "batch"), ("static", ["batch"])])
def test_a_document_with_bad_dims_is_refused_naming_the_field_and_nothing_is_stored(regime, dims):
    result = make_result("mlp_loop", regime)
    result["config"]["dims"] = dims
    with pytest.raises(run_document.InvalidDocument) as caught:
        run_ingest_and_detect(document=make_document(results=[result]))
    assert caught.value.errors[0].field.startswith("results[0].config.dims")  # the list, or its item at fault
    assert not Config.objects.exists() and not Result.objects.exists()


@pytest.mark.django_db
def test_dynamic_pairs_within_the_same_dims(client):
    history()
    every = client.get("/dynamic/").content.decode()
    assert "1.000" in table_rows(every)["mlp_loop"] and 'id="dynamic-dims"' not in every
    batch = client.get("/dynamic/?dims=batch").content.decode()
    assert "0.500" in table_rows(batch)["mlp_loop"]
    assert "marked only the <strong>batch</strong> dims" in batch
    bad = client.get("/dynamic/?dims=height")
    assert bad.status_code == 400 and 'data-parameter="dims"' in bad.content.decode()


@pytest.mark.django_db
def test_the_workload_page_picks_the_dims_configuration_apart_from_every_dim(client):
    history()
    every = client.get("/workloads/mlp_loop/?regime=unbacked").content.decode()
    assert "<h2>default · unbacked · float32 on cpu</h2>" in every
    batch = client.get("/workloads/mlp_loop/?regime=unbacked&dims=batch").content.decode()
    assert "<h2>default · unbacked (batch) · float32 on cpu</h2>" in batch
    assert '<option value="batch" selected>batch</option>' in batch and '<option value="">every declared dim</option>' in batch
    bad = client.get("/workloads/mlp_loop/?dims=height")
    assert bad.status_code == 400 and 'data-parameter="dims"' in bad.content.decode()
    # /dynamic/'s batch-only row links to the batch-only series.
    assert "regime=unbacked&amp;dtype=float32&amp;dims=batch" in client.get("/dynamic/?dims=batch").content.decode()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_dims_picker_shows_the_batch_only_pair(browser, live_server):
    history()
    page, problems = open_page(browser, f"{live_server.url}/dynamic/", viewport=VIEW)
    picker = page.locator("#pick-dims")
    assert picker.locator("option").all_inner_texts() == ["every declared dim", "batch"]
    assert page.locator("#dynamic-table").get_by_role("row", name="mlp_loop").inner_text().count("1.000") >= 1
    picker.select_option("batch")
    page.wait_for_url("**dims=batch**")
    page.wait_for_load_state("networkidle")
    shot(page, "dynamic-dims-batch")
    assert "marked only the batch dims" in page.locator("#dynamic-dims").inner_text()
    assert "0.500" in page.locator("#dynamic-table").get_by_role("row", name="mlp_loop").inner_text()
    page.locator("#dynamic-table").get_by_role("link", name="mlp_loop").click()
    page.wait_for_load_state("networkidle")
    shot(page, "workload-dims-batch")
    assert page.get_by_role("heading", name="default · unbacked (batch) · float32 on cpu").count() == 1
    assert page.locator("#workload-pickers select[name=dims]").input_value() == "batch"
    assert problems == []
