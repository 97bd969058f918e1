"""A configuration is stored as one identity (docs/case-config.md): a unique key and its fields as
tags. Series signatures stay what they were; a new value or field needs no migration."""
from __future__ import annotations

import hashlib
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from contract import document as run_document
from contract import vocabulary
from contract.case_config import CaseConfig
from dashboard.dispatch.models import CaseTask
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.models import Regression
from dashboard.results.models import Build, Config, Result, Series
from dashboard.results.services import config_get_or_create, series_signature
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build, ref_for_day, sha_for
from tests.dashboard.test_browser_noise_rule import shot
from tests.documents import make_document, make_result

NEW_DTYPE = "float8_e4m3fn"


def old_signature(workload: str, mode: str, regime: str, dtype: str, device: str, machine_class: str) -> str:
    """How series signatures were computed before configurations had keys (services.series_signature at 47c7c1f)."""
    return hashlib.sha1(json.dumps([workload, mode, regime, dtype, device, machine_class]).encode()).hexdigest()


@pytest.mark.django_db
def test_ingest_stores_each_configuration_once_by_its_key_with_its_fields_as_tags():
    document = make_document(results=[make_result("mlp_loop", "static"), make_result("mlp_loop", "backed"),
                                      make_result("resnet_train", "static")])
    run_ingest_and_detect(document=document)

    assert sorted(Config.objects.values_list("key", flat=True)) == ["default/backed/float32/cpu", "default/static/float32/cpu"]
    static = Config.objects.get(key="default/static/float32/cpu")
    assert static.tags == {"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu"}
    assert static.case_config == CaseConfig("default", "static", "float32", "cpu") and str(static) == static.key
    assert Result.objects.filter(config=static).count() == 2
    with pytest.raises(IntegrityError), transaction.atomic():
        Config.objects.create(key=static.key, tags=static.tags)


@pytest.mark.django_db
def test_a_stored_series_keeps_the_signature_it_always_had():
    run_ingest_and_detect(document=make_document(results=[make_result("mlp_loop", "static"), make_result("resnet_train", "backed", "max-autotune")]))

    mlp = Series.objects.get(workload__name="mlp_loop")
    assert mlp.signature == "82d1838283a3ed947f4eb0e0837838f86722b7c4" == old_signature("mlp_loop", "default", "static", "float32", "cpu", "cpu")
    resnet = Series.objects.get(workload__name="resnet_train")
    assert resnet.signature == old_signature("resnet_train", "max-autotune", "backed", "float32", "cpu", "cpu")
    assert series_signature(workload_name="resnet_train", config=resnet.config, machine_class="cpu") == resnet.signature


@pytest.mark.django_db
def test_an_optional_field_is_a_new_key_without_a_migration():
    """Which dims a regime marks is a field no column holds: a new key, tags and signature part."""
    every = config_get_or_create(case=CaseConfig("default", "backed", "float32", "cuda"))
    batch = config_get_or_create(case=CaseConfig("default", "backed", "float32", "cuda", dims=("input_ids:0",)))

    assert every.pk != batch.pk and batch.key == "default/backed/float32/cuda/dims=input_ids:0"
    stored = Config.objects.get(pk=batch.pk)
    assert stored.tags["dims"] == ["input_ids:0"] and stored.case_config.dims == ("input_ids:0",)
    assert config_get_or_create(case=CaseConfig.from_key(batch.key)).pk == batch.pk


@pytest.fixture
def new_dtype(monkeypatch):
    """A dtype added to the vocabulary, as a schema change adds one (the schema's enum and the
    words read from it), and taken out again after the test."""
    enum = run_document.load_schema()["$defs"]["result"]["properties"]["config"]["properties"]["dtype"]["enum"]
    enum.append(NEW_DTYPE)
    monkeypatch.setattr(vocabulary, "DTYPES", (*vocabulary.DTYPES, NEW_DTYPE))
    run_document._validator.cache_clear()
    run_document._fast_validator.cache_clear()
    yield NEW_DTYPE
    enum.remove(NEW_DTYPE)
    run_document._validator.cache_clear()
    run_document._fast_validator.cache_clear()


def _new_dtype_document() -> dict:
    result = make_result("mlp_loop", "static")
    result["config"]["dtype"] = NEW_DTYPE
    return make_document(results=[result])


@pytest.mark.django_db
def test_without_the_new_dtype_in_the_vocabulary_its_document_is_refused_naming_the_field():
    with pytest.raises(run_document.InvalidDocument) as caught:
        run_ingest_and_detect(document=_new_dtype_document())
    assert caught.value.errors[0].field == "results[0].config.dtype"
    assert not Config.objects.exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_new_dtype_is_stored_and_shown_without_a_migration(new_dtype, browser, live_server):
    document = _new_dtype_document()
    run_ingest_and_detect(document=document)
    config = Config.objects.get(key=f"default/static/{NEW_DTYPE}/cpu")
    assert config.tags["dtype"] == NEW_DTYPE and Result.objects.get().config == config

    # The run page lists the case with its dtype; its link opens the workload on that configuration.
    page, problems = open_page(browser, f"{live_server.url}/runs/{document['run']['id']}/", viewport={"width": 1400, "height": 900})
    shot(page, "case-config-new-dtype-run")
    row = page.locator("tr.status-pass").first
    assert [row.locator("td").nth(i).inner_text() for i in (1, 2, 3)] == ["default", "static", NEW_DTYPE]
    row.locator("td a").first.click()
    page.wait_for_load_state("networkidle")
    shot(page, "case-config-new-dtype-workload")
    assert f"dtype={NEW_DTYPE}" in page.url
    assert page.locator(f"select[name=dtype] option[value={NEW_DTYPE}]").evaluate("o => o.selected")
    assert f"default · static · {NEW_DTYPE}" in page.locator("body").inner_text()
    assert problems == []


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_overview_compare_and_regressions_link_a_new_dtypes_configuration(new_dtype, browser, live_server):
    for day, speedup in ((1, 1.25), (2, 1.0)):
        result = make_result("mlp_loop", "static", speedup=speedup)
        result["config"]["dtype"] = NEW_DTYPE
        ingest_build(day, results=[result])
    series = Series.objects.get()
    Regression.objects.create(series=series, first_bad_build=Build.objects.get(git_sha=sha_for(2)), raised_build=Build.objects.get(git_sha=sha_for(2)),
                              last_good_build=Build.objects.get(git_sha=sha_for(1)), kind="regression", metric="speedup",
                              finding="change_point", before_value=1.25, after_value=1.0, magnitude=-0.2, confidence=0.97)
    wanted = {"mode": ["default"], "regime": ["static"], "dtype": [NEW_DTYPE]}
    pages = (("overview", "/?machine=cpu", "table.overview a[href*='regime=']"),
             ("compare", f"/compare/?base={ref_for_day(1)}&head={ref_for_day(2)}", "a[href*='/workloads/mlp_loop/']"),
             ("regressions", "/regressions/", "a[href*='/workloads/mlp_loop/']"))
    for name, url, link in pages:
        page, problems = open_page(browser, f"{live_server.url}{url}", viewport={"width": 1400, "height": 900})
        shot(page, f"case-config-new-dtype-{name}")
        href = page.locator(link).first.get_attribute("href")
        query = parse_qs(urlsplit(href).query)
        assert {word: query.get(word) for word in wanted} == wanted, (name, href)
        assert problems == [], name
    page, _ = open_page(browser, f"{live_server.url}/?dtype={NEW_DTYPE}")
    assert page.locator(f"select[name=dtype] option[value={NEW_DTYPE}]").evaluate("o => o.selected")
    assert f"default · static · {NEW_DTYPE}" in page.locator("body").inner_text()


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_stored_configurations_and_case_tasks_their_keys_and_keeps_signatures():
    before = [("results", "0012_run_reason"), ("dispatch", "0003_variants_interpreter_per_build")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    build = old.get_model("results", "Build").objects.create(torch_version="2.11.0", git_sha="a" * 40, ordered_at="2026-11-01T00:00Z")
    machine = old.get_model("results", "Machine").objects.create(hostname="h", machine_class="gpu-h100")
    run = old.get_model("results", "Run").objects.create(build=build, machine=machine, suite="tiny")
    workload = old.get_model("results", "Workload").objects.create(name="bert_encoder", phase="infer")
    config = old.get_model("results", "Config").objects.create(compile_mode="max-autotune", shape_regime="unbacked",
                                                               dtype="bfloat16", device="cuda")
    signature = old_signature("bert_encoder", "max-autotune", "unbacked", "bfloat16", "cuda", "gpu-h100")
    old.get_model("results", "Series").objects.create(workload=workload, config=config, machine_class="gpu-h100", signature=signature)
    old.get_model("dispatch", "CaseTask").objects.create(
        run=run, workload="bert_encoder", compile_mode="max-autotune", shape_regime="unbacked", dtype="bfloat16", device="cuda",
        spec={}, workload_description={}, timeout_s=60)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    stored = Config.objects.get()
    assert stored.key == "max-autotune/unbacked/bfloat16/cuda"
    assert stored.case_config == CaseConfig("max-autotune", "unbacked", "bfloat16", "cuda")
    series = Series.objects.get()
    assert series.signature == signature == series_signature(workload_name="bert_encoder", config=stored, machine_class="gpu-h100")
    assert CaseTask.objects.get().config_key == stored.key
