"""The one ingest service: round trip, idempotence, and bad documents that change nothing."""
from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, transaction

from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.pipeline.services import run_ingest_and_detect
from contract.document import InvalidDocument
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db

ALL_MODELS = (Build, Config, Machine, Result, Run, Series, Workload)


def row_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in ALL_MODELS}


def test_a_cpu_case_that_measured_only_its_weights_stores_no_memory():
    """#42 item 8: equal eager and compiled peaks on a CPU are the weights (the peak RSS did not rise):
    "–" like a CPU class whose runner measured none, never "1.000x"; peaks that differ are kept."""
    weights = make_result("mlp_loop", "static", eager_peak_memory_bytes=16_896, compiled_peak_memory_bytes=16_896)
    run_ingest_and_detect(document=make_document(results=[weights, make_result("resnet_train", "static")]))
    only_weights = Result.objects.get(workload__name="mlp_loop")
    assert (only_weights.eager_peak_memory_bytes, only_weights.compiled_peak_memory_bytes, only_weights.memory_compression) == (None, None, None)
    assert only_weights.environment["memory_weights_bytes"] == 16_896
    assert Result.objects.get(workload__name="resnet_train").memory_compression == 2.0


def test_round_trip_stores_every_field():
    document = make_document()
    document["results"][0].update(
        graph_breaks=[{"reason": "call to Tensor.item()", "location": "workloads/x.py:41", "count": 2}],
        recompiles=[{"reason": "tensor 'x' size mismatch at index 0. expected 8, actual 16", "count": 1}],
    )
    outcome = run_ingest_and_detect(document=document)

    assert outcome.created and outcome.results_created == 6 and outcome.results_skipped == 0
    run = Run.objects.select_related("build", "machine").get(pk=document["run"]["id"])
    assert (run.size, run.build.git_sha, run.machine.machine_class) == ("tiny", document["build"]["git_sha"], "cpu")
    assert run.started_at.isoformat() == "2026-11-22T05:00:00+00:00"
    result = Result.objects.get(run=run, workload__name="mlp_loop", config__tags__shape_regime="static")
    sent = document["results"][0]
    for name, value in sent["metrics"].items():
        assert getattr(result, name) == value, name
    assert result.memory_compression == 2.0  # eager peak / compiled peak
    assert result.samples == sent["samples"]
    assert result.graph_breaks == sent["graph_breaks"]
    assert result.recompiles == sent["recompiles"]
    assert result.repro == sent["repro"]
    assert result.build_id == run.build_id
    assert result.series.machine_class == "cpu" and len(result.series.signature) == 40
    assert Workload.objects.get(name="resnet_train").phase == "train"


def test_posting_the_same_run_twice_stores_it_once():
    document = make_document()
    run_ingest_and_detect(document=document)
    before = row_counts()

    again = run_ingest_and_detect(document=json.dumps(document))

    assert not again.created and again.results_created == 0 and again.results_skipped == 6
    assert row_counts() == before


def test_a_run_posted_in_parts_is_completed_not_duplicated():
    first = make_document(results=[make_result("mlp_loop", "static")])
    run_ingest_and_detect(document=first)
    whole = make_document(run_id=first["run"]["id"])

    outcome = run_ingest_and_detect(document=whole)

    assert (outcome.created, outcome.results_created, outcome.results_skipped) == (False, 5, 1)
    assert Result.objects.filter(run_id=first["run"]["id"]).count() == 6


def test_series_identity_is_shared_across_runs_and_builds():
    run_ingest_and_detect(document=make_document())
    run_ingest_and_detect(document=make_document(git_sha="a" * 40))
    assert Build.objects.count() == 2
    assert Series.objects.count() == 6
    assert all(s.results.count() == 2 for s in Series.objects.all())


def _ingest_expecting_error(document) -> str:
    before = row_counts()
    with pytest.raises(InvalidDocument) as raised:
        run_ingest_and_detect(document=document)
    assert row_counts() == before, "a bad document must write nothing"
    return str(raised.value)


def test_missing_field_is_named():
    document = make_document()
    del document["results"][2]["status"]
    assert "results[2].status: this field is required" in _ingest_expecting_error(document)


def test_wrong_type_is_named():
    document = make_document()
    document["results"][1]["metrics"]["speedup"] = "fast"
    message = _ingest_expecting_error(document)
    assert "results[1].metrics.speedup: expected number or null, got str" in message


def test_unknown_status_is_named():
    document = make_document()
    document["results"][4]["status"] = "exploded"
    message = _ingest_expecting_error(document)
    assert "results[4].status: 'exploded' is not one of 'pass'" in message


def test_oversized_payload_is_refused_before_parsing(settings):
    settings.INGEST_MAX_DOCUMENT_BYTES = 2_000
    document = make_document()
    assert "the limit is 2000 bytes" in _ingest_expecting_error(json.dumps(document))
    assert "the limit is 2000 bytes" in _ingest_expecting_error(document)


def test_not_json_is_refused():
    assert "not valid JSON" in _ingest_expecting_error(b"{ this is not json")


def test_undeclared_workload_and_duplicate_case_are_named():
    document = make_document()
    document["results"][0]["workload"] = "nope"
    document["results"].append(make_result("mlp_loop", "backed"))
    message = _ingest_expecting_error(document)
    assert "results[0].workload: 'nope' is not declared in workloads" in message
    assert "results[6]: same workload and config as results[1]" in message


def test_samples_that_are_not_one_per_pair_are_named_and_nothing_is_stored():
    before = row_counts()
    document = make_document()
    document["results"][1]["samples"]["compiled_ms"] = [2.0]
    document["results"][2]["samples"]["host_probe_ms"] = [0.9, 1.0]
    message = _ingest_expecting_error(document)
    assert "results[1].samples.compiled_ms: has 1 values for 3 eager_ms values (one per pair)" in message
    assert "results[2].samples.host_probe_ms: has 2 values for 3 eager_ms values (one per pair)" in message
    assert row_counts() == before


def test_host_probes_are_stored_with_the_samples():
    document = make_document()
    document["results"][0]["samples"]["host_probe_ms"] = [0.9, 2.0, 1.0]
    run_ingest_and_detect(document=document)
    stored = Result.objects.get(workload__name=document["results"][0]["workload"], config__tags__shape_regime=document["results"][0]["config"]["shape_regime"])
    assert stored.samples["host_probe_ms"] == [0.9, 2.0, 1.0]


def test_a_sha_stored_with_another_torch_version_is_refused():
    run_ingest_and_detect(document=make_document())
    before = row_counts()
    document = make_document(git_sha="b" * 40)
    document["build"]["torch_version"] = "2.12.0"
    run_ingest_and_detect(document=document)  # a second, valid build
    stored = row_counts()
    assert stored["Run"] == before["Run"] + 1

    conflicting = make_document(git_sha="b" * 40)  # same sha, another torch version
    message = _ingest_expecting_error(conflicting)
    assert "build.torch_version" in message
    assert row_counts() == stored


def test_same_run_id_for_another_build_is_refused_and_rolled_back():
    """The conflict is found after the new build, machine and workload rows were written: all go."""
    document = make_document()
    run_ingest_and_detect(document=document)
    other = make_document(run_id=document["run"]["id"], git_sha="c" * 40)
    other["machine"]["hostname"] = "another-box"
    other["workloads"].append({"name": "brand_new", "phase": "infer"})
    message = _ingest_expecting_error(other)  # asserts every table's row count is unchanged
    assert f"run {document['run']['id']} is stored with another build" in message
    assert not Build.objects.filter(git_sha="c" * 40).exists()


def test_database_constraints_keep_data_clean():
    run_ingest_and_detect(document=make_document())
    result = Result.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Result.objects.create(
            run=result.run, build=result.build, workload=result.workload, config=result.config, series=result.series, status="pass"
        )
    build = Build.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Build.objects.create(torch_version="x", git_sha=build.git_sha, local_label=build.local_label, ordered_at=build.ordered_at)
    # The same sha under another local label is a different build.
    Build.objects.create(torch_version="x", git_sha=build.git_sha, local_label="patched", ordered_at=build.ordered_at)
