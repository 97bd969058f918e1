"""#19 items 2, 3, 6, 7: values the schema allows but the database, the detector or the queues cannot
take are refused at the one ingest path (API, ``manage.py ingest``, the Celery task), naming the
field, storing nothing."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from dashboard.results.models import Build, Machine, Result, Run, Series, Workload
from dashboard.pipeline.tasks import ingest_run_document
from tests.fixtures.api import fields
from tests.documents import make_document

pytestmark = pytest.mark.django_db


def with_(change) -> dict:
    document = make_document()
    change(document)
    return document


def _set(path: list, value):
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


BAD = {
    "run.started_at": _set(["run", "started_at"], "0001-01-01T00:00:00+14:00"),
    "run.finished_at": _set(["run", "finished_at"], "9999-12-31T23:59:59-14:00"),
    "build.commit_time": _set(["build", "commit_time"], "1900-01-01T00:00:00+00:00"),
    "results[0].samples.eager_ms[1]": _set(["results", 0, "samples", "eager_ms"], [2.5, 0, 2.4]),
    "results[0].samples.compiled_ms[0]": _set(["results", 0, "samples", "compiled_ms"], [10**400, 2.6, 2.4]),
    "results[0].metrics.speedup": _set(["results", 0, "metrics", "speedup"], 10**400),
    "machine.machine_class": _set(["machine", "machine_class"], "ingest"),
    "build.environment": _set(["build", "environment"], {"pip": "x" * 70_000}),
    "results[0].environment": _set(["results", 0, "environment"], {"pip": "x" * 70_000}),
}


def nothing_stored() -> bool:
    return all(model.objects.count() == 0 for model in (Build, Machine, Result, Run, Series, Workload))


@pytest.mark.parametrize("field", BAD)
def test_the_api_refuses_naming_the_field(writer, field):
    response = writer.post("/api/v1/runs/submit/", json.dumps(with_(BAD[field])), content_type="application/json")
    assert response.status_code == 400, response.content
    assert field in fields(response)
    assert nothing_stored()


@pytest.mark.parametrize("field", ["run.started_at", "results[0].samples.compiled_ms[0]", "machine.machine_class"])
def test_manage_py_ingest_and_celery_refuse_naming_the_field(tmp_path, capsys, field):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(with_(BAD[field])))
    with pytest.raises(CommandError):
        call_command("ingest", str(path))
    assert f"{path}: {field}:" in capsys.readouterr().err
    answer = ingest_run_document.apply(args=[with_(BAD[field])]).get()
    assert answer["ok"] is False and field in [e["field"] for e in answer["errors"]]
    assert nothing_stored()


def test_times_in_range_and_a_small_environment_are_stored(writer):
    document = with_(_set(["run", "started_at"], "1970-01-01T14:00:00+14:00"))
    document["build"]["environment"] = {"pip": "x" * 60_000}
    response = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
    assert response.status_code in (200, 201), response.content
    # #34: a status alone passed whatever was stored; the values themselves must be there, as sent.
    run = Run.objects.select_related("build").get(pk=document["run"]["id"])
    assert run.started_at.isoformat() == "1970-01-01T00:00:00+00:00"  # 14:00 at +14:00
    assert run.build.environment == {"pip": "x" * 60_000}
    assert Result.objects.filter(run=run).count() == len(document["results"]) > 0


def test_a_run_request_for_a_dashboard_queue_is_refused(writer):
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": "a" * 40}, format="json")
    for dispatch in (True, False):
        response = writer.post("/api/v1/runs/", {"build": "a" * 12, "machine_class": "ingest", "dispatch": dispatch}, format="json")
        assert response.status_code == 400 and fields(response) == ["machine_class"], response.content
    assert Run.objects.count() == 0


def test_a_document_of_more_results_than_detection_and_the_web_server_are_sized_for_is_refused(writer):
    """Issue #46 item 3: 10,000 results at most (the largest plan is 3,480 cases); 40,000 stalled the
    worker and passed gunicorn's timeout. The 400 names ``results``; nothing is stored."""
    document = make_document()
    case = {"workload": "mlp_loop", "config": {"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu"},
            "status": "pass"}
    document["results"] = [case] * 10_001
    response = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
    assert response.status_code == 400 and fields(response) == ["results"], response.content[:300]
    assert "10000" in response.json()["detail"] or "10,000" in response.json()["detail"]
    assert not Run.objects.exists()
