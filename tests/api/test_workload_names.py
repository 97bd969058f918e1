"""A write token must not make the web process import and call arbitrary Python (issue #19, item 1).

``workloads`` in a run request used to reach ``importlib.import_module(m)`` and a call of its
attribute: ``"os:getpid"`` answered with a run, ``"os:abort"`` killed the process.
"""
from __future__ import annotations

import os

import pytest

from dashboard.results.models import Run
from tests.fixtures.api import fields

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


@pytest.fixture
def calls(monkeypatch):
    """Record any call of the functions an attacker would name (instead of running them)."""
    seen = []
    for name in ("abort", "system"):
        monkeypatch.setattr(os, name, lambda *a, _name=name, **k: seen.append(_name) or 0)
    return seen


@pytest.mark.parametrize("name", ["os:getpid", "os:abort", "os:system", "subprocess:Popen",
                                  "tests.runner.sample_workloads:TinyMLP"])
def test_a_run_request_never_imports_a_module_it_names(writer, calls, monkeypatch, name):
    # Even the test suite's own module is refused once it is not in the allow-list.
    monkeypatch.setenv("PTBENCH_WORKLOAD_MODULES", "")
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA}, format="json")
    response = writer.post("/api/v1/runs/", {"build": SHA[:12], "machine_class": "cpu", "workloads": [name]}, format="json")
    assert response.status_code == 400, response.content
    assert fields(response) == ["workloads"]
    assert "only catalog names" in response.json()["errors"][0]["message"]
    assert calls == [] and Run.objects.count() == 0


def test_an_allowed_module_still_must_hold_a_workload_class(monkeypatch, calls):
    from workloads.registry import UnknownWorkload, get_workload

    monkeypatch.setenv("PTBENCH_WORKLOAD_MODULES", "os")
    with pytest.raises(UnknownWorkload, match="not a Workload class"):
        get_workload("os:abort")
    assert calls == []


def test_the_local_cli_may_name_a_module(monkeypatch):
    from runner.listing import resolve_workloads

    monkeypatch.setenv("PTBENCH_WORKLOAD_MODULES", "")
    [(name, workload)] = resolve_workloads(["tests.runner.sample_workloads:TinyMLP"], allow_import=True)
    assert workload.name == "test_tiny_mlp"
    with pytest.raises(LookupError, match="only catalog names"):
        resolve_workloads(["tests.runner.sample_workloads:TinyMLP"])


def test_a_worker_never_lets_a_message_allow_imports(monkeypatch, tmp_path):
    """The spec in a case message cannot switch on imports in the case process."""
    from runner.worker import measure

    seen = {}

    class Executor:
        def __init__(self, **_):
            pass

        def run(self, spec, **_):
            seen["spec"] = spec
            raise RuntimeError("stop here")

    class Local:
        def find(self, **_):
            return type("I", (), {"python": "python", "environment": {}})()

    monkeypatch.setattr(measure, "CaseExecutor", Executor)
    spec = {"workload": "os:abort", "compile_mode": "default", "shape_regime": "static", "dtype": "float32",
            "device": "cpu", "import_allowed": True}
    with pytest.raises(RuntimeError, match="stop here"):
        measure.measure_case(case_id=1, run_id="r", build={"git_sha": "x"}, size="tiny", spec=spec,
                             workload={"name": "w"}, timeout_s=1, local=Local(), machine_class="cpu", worker={},
                             notify_started=lambda: None)
    assert seen["spec"].import_allowed is False


def test_the_case_process_refuses_a_module_it_may_not_import(monkeypatch, tmp_path, calls):
    from runner.engine.case import run_case
    from runner.engine.result_file import ResultFile
    from contract.spec import CaseSpec

    monkeypatch.setenv("PTBENCH_WORKLOAD_MODULES", "")
    spec = CaseSpec(workload="os:abort", compile_mode="default", shape_regime="static", dtype="float32", device="cpu")
    record = run_case(spec, ResultFile(tmp_path / "result.json"))
    assert record.status == "eager_error" and "only catalog names" in record.error["message"]
    assert calls == []


@pytest.mark.parametrize("name", ["../../admin/x", "..", "hf/../admin", "hf/./x", "/admin", "hf//x", "hf/", "hf\\..\\admin"])
def test_a_workload_name_that_climbs_out_of_its_url_is_refused_at_ingest(writer, name):
    """``../../admin/x`` used to be stored, and its workload link led to ``/admin/x/``. Slashes
    themselves stay allowed (``hf/bert-base`` has a page)."""
    import json

    from dashboard.results.models import Workload
    from tests.documents import make_document

    document = make_document()
    old = document["workloads"][0]["name"]
    document["workloads"][0]["name"] = name
    for result in document["results"]:
        if result["workload"] == old:
            result["workload"] = name
    response = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
    assert response.status_code == 400 and "workloads[0].name" in fields(response)
    assert not Run.objects.exists() and not Workload.objects.exists()
