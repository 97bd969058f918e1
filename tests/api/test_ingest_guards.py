"""What PostgreSQL cannot store is refused by the ingest service itself, whichever way a document
comes in (the API, the Celery task, ``manage.py ingest``, the runner's store), naming the fields;
and the service's bulk writes (workloads, machine, series) keep get-or-create's answers."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.pipeline.tasks import ingest_run_document
from contract.document import InvalidDocument
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db

BAD_FIELDS = ["machine.cpu_count", "results[0].metrics.speedup", "results[1].metrics.graph_break_count",
              "results[2].repro", "results[2].samples.compiled_ms[0]", "results[4].environment.gpu"]


def unstorable_document() -> dict:
    document = make_document()
    document["machine"]["cpu_count"] = 2**63  # the schema allows it; no integer column holds it
    document["results"][0]["metrics"]["speedup"] = float("inf")
    document["results"][1]["metrics"]["graph_break_count"] = 2**31  # an int4 column
    document["results"][2]["repro"] = "python -m runner\x00"
    document["results"][2]["samples"]["compiled_ms"] = [float("nan")]
    document["results"][4]["environment"] = {"gpu": "\udc00"}
    return document


def nothing_stored() -> bool:
    return all(model.objects.count() == 0 for model in (Build, Machine, Result, Run, Series, Workload))


def test_run_ingest_refuses_what_the_database_cannot_hold():
    with pytest.raises(InvalidDocument) as raised:
        run_ingest_and_detect(document=unstorable_document())
    assert sorted(e.field for e in raised.value.errors) == BAD_FIELDS
    assert nothing_stored()


@pytest.mark.parametrize("name, value", [("cpu_count", 3e9), ("memory_bytes", 1e19), ("gpu_count", 1e10)])
def test_an_integer_in_float_notation_is_checked_as_an_integer(writer, name, value):
    """Issue #46 item 9: JSON Schema counts 3e9 as an integer; it reached PostgreSQL as a 500."""
    document = make_document()
    document["machine"][name] = value
    response = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
    assert response.status_code == 400 and [e["field"] for e in response.json()["errors"]] == [f"machine.{name}"]
    assert nothing_stored()
    document["machine"][name] = 4.0  # in range: stored as the integer it is
    assert writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json").status_code == 201
    assert getattr(Machine.objects.get(), name) == 4


def test_the_celery_ingest_task_answers_the_errors():
    answer = ingest_run_document.apply(args=[unstorable_document()]).get()
    assert answer["ok"] is False and sorted(e["field"] for e in answer["errors"]) == BAD_FIELDS
    assert nothing_stored()


def test_manage_py_ingest_names_the_fields(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(unstorable_document()))  # NaN and Infinity as json.dumps writes them
    with pytest.raises(CommandError):
        call_command("ingest", str(path))
    err = capsys.readouterr().err
    for field in BAD_FIELDS:
        assert f"{path}: {field}:" in err
    assert nothing_stored()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_runner_hands_documents_to_manage_py_ingest(subprocess_env, monkeypatch):
    from runner.delivery import DeliveryFailed, ingest_document

    for key, value in subprocess_env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(DeliveryFailed) as raised:
        ingest_document(unstorable_document())
    assert "results[2].repro: contains a NUL character (U+0000)" in str(raised.value)
    assert nothing_stored()
    document = make_document()
    assert ingest_document(document) == f"run {document['run']['id']} stored: 6 results created"
    assert ingest_document(document) == f"run {document['run']['id']} already stored: 0 results created"


def test_unstorable_values_are_named_before_schema_errors():
    document = make_document()
    document["results"][3]["status"] = "exploded"
    document["results"][3]["error"] = {"type": "X\x00", "message": "m"}
    with pytest.raises(InvalidDocument) as raised:
        run_ingest_and_detect(document=document)
    assert [str(e) for e in raised.value.errors] == ["results[3].error.type: contains a NUL character (U+0000)"]


def test_a_key_postgresql_cannot_store_is_named_at_its_object():
    document = make_document()
    document["build"]["environment"] = {"ok": 1, "bad\x00key": 2}
    with pytest.raises(InvalidDocument) as raised:
        run_ingest_and_detect(document=json.dumps(document))
    assert [str(e) for e in raised.value.errors] == ["build.environment: a key contains a NUL character (U+0000)"]


def test_a_backslash_u0000_in_text_is_stored():
    document = make_document()
    document["results"][0]["repro"] = "printf '\\u0000'"  # a backslash, not a NUL
    run_ingest_and_detect(document=document)
    assert Result.objects.filter(repro="printf '\\u0000'").count() == 1


def test_a_later_document_updates_workload_and_machine_facts_and_reuses_series():
    run_ingest_and_detect(document=make_document())
    series_ids = set(Series.objects.values_list("id", flat=True))
    later = make_document(git_sha="a" * 40)
    later["workloads"][0].update(category="renamed", dynamic_dims=["x:0", "x:1"], description="")
    later["machine"].update(cpu_count=64, gpu_name="NVIDIA H100")
    later["results"].append(make_result("mlp_loop", "static", mode="max-autotune"))
    outcome = run_ingest_and_detect(document=later)
    assert outcome.results_created == 7
    mlp = Workload.objects.get(name="mlp_loop")
    assert (mlp.category, mlp.dynamic_dims, mlp.description) == ("renamed", ["x:0", "x:1"], "")
    assert Workload.objects.get(name="resnet_train").category == "vision-train"
    machine = Machine.objects.get()
    assert (machine.cpu_count, machine.gpu_name) == (64, "NVIDIA H100")
    assert Series.objects.count() == 7 and series_ids < set(Series.objects.values_list("id", flat=True))
    assert Config.objects.count() == 4
    for result in Result.objects.select_related("series", "workload", "config"):
        assert (result.series.workload_id, result.series.config_id, result.series.machine_class) == (
            result.workload_id, result.config_id, "cpu")


@pytest.mark.django_db(transaction=True)
def test_concurrent_ingests_of_the_same_new_workloads_and_series_all_succeed():
    import threading

    from django.db import connection

    names = [f"w{i:02d}" for i in range(30)]

    def document(index: int) -> dict:
        order = names if index % 2 else names[::-1]  # opposite orders: no deadlock either way
        doc = make_document(git_sha=f"{index + 1:040x}",
                            results=[make_result(name, regime) for name in order for regime in ("static", "backed")])
        doc["workloads"] = [{"name": name, "phase": "infer"} for name in order]
        return doc

    documents = [document(i) for i in range(4)]
    barrier, failures = threading.Barrier(len(documents)), []

    def ingest(doc: dict) -> None:
        try:
            barrier.wait(timeout=30)
            run_ingest_and_detect(document=doc)
        except Exception as exc:  # noqa: BLE001 (reported below)
            failures.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=ingest, args=(doc,)) for doc in documents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    assert Workload.objects.count() == 30 and Series.objects.count() == 60 and Result.objects.count() == 240
