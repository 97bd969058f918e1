"""#34 item 3: ``size`` (tiny, full) apart from ``suite`` (core, hf, timm, torchvision, all) in the
API, ``python -m runner run``/``ci request``, ``manage.py request_run``/``schedule_run`` and the
schedule's task; a size given where the suite now goes is refused naming the new place (stored data:
tests/dispatch/test_size_migration.py)."""
from __future__ import annotations

import argparse
import json

import pytest
from django.core.management import CommandError, call_command

from contract.suites import suite_workloads
from dashboard.dispatch.services.planning import matrix_resolve
from dashboard.dispatch.tasks import scheduled_run
from dashboard.results.models import Run
from dashboard.results.selectors.common import build_ref
from dashboard.results.services import build_get_or_create, run_ingest
from runner.arguments import build_parser
from runner.ci import main as ci
from runner.cli import main as runner_main
from runner.run import _requested_names
from tests.fixtures.api import fields
from tests.fixtures.workers import QUICK
from tests.documents import make_document

pytestmark = pytest.mark.django_db
BODY = {"build": "c" * 12, "machine_class": "cpu", "dispatch": False, "cases_expected": 2}


@pytest.fixture
def registered(writer):
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": "c" * 40}, format="json")


def test_a_run_request_takes_a_size_and_a_suite_and_answers_its_size(writer, registered):
    created = writer.post("/api/v1/runs/", {**BODY, "size": "tiny", "suite": "core"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["size"] == "tiny" and "suite" not in created.json()
    assert Run.objects.get(pk=created.json()["id"]).size == "tiny"
    default = writer.post("/api/v1/runs/", BODY, format="json").json()
    assert default["size"] == "full"


@pytest.mark.parametrize("old", ["tiny", "full"])
def test_a_size_sent_as_the_suite_is_a_400_naming_size(writer, registered, old):
    response = writer.post("/api/v1/runs/", {**BODY, "suite": old}, format="json")
    assert response.status_code == 400 and fields(response) == ["suite"]
    assert response.json()["detail"] == (f"'{old}' is a size, not a suite: give it as size (tiny or full); "
                                         "suites are core, dist, hf, timm, torchvision, all")
    bad = writer.post("/api/v1/runs/", {**BODY, "size": "core"}, format="json")
    assert bad.status_code == 400 and fields(bad) == ["size"]
    assert Run.objects.count() == 0


def test_runs_are_listed_by_size_and_the_old_parameter_is_named(api):
    run_ingest(document=make_document())
    full = make_document(suite="full", git_sha="d" * 40)
    run_ingest(document=full)
    listed = api.get("/api/v1/runs/", {"size": "full"}).json()["results"]
    assert [r["id"] for r in listed] == [full["run"]["id"]] and listed[0]["size"] == "full"
    old = api.get("/api/v1/runs/", {"suite": "full"})
    assert old.status_code == 400 and fields(old) == ["suite"] and old.json()["detail"].startswith("renamed: use size")


def test_a_suite_joins_the_named_workloads():
    matrix = matrix_resolve(size="tiny", suite="core", workloads=["hf:BertForMaskedLM"], machine_class="cpu", default_timeout_s=60)
    assert matrix.workloads == ["hf:BertForMaskedLM", *suite_workloads("core")] and len(matrix.workloads) == 10
    assert matrix_resolve(size="full", machine_class="cpu", default_timeout_s=60).workloads is None  # the core suite


def test_the_runners_size_and_suite(capsys):
    args = build_parser().parse_args(["run", "--size", "full", "--suite", "core", "--workloads", "hf:BertForMaskedLM"])
    assert args.size == "full" and _requested_names(args) == ["hf:BertForMaskedLM", *suite_workloads("core")]
    assert _requested_names(argparse.Namespace(suite=None, workloads=None)) is None
    for argv in (["run", "--suite", "tiny"], ["ci", "request", "--build", "c" * 12, "--machine-class", "cpu", "--suite", "full"]):
        with pytest.raises(SystemExit) as usage:
            runner_main(argv) if argv[0] == "run" else ci(argv[1:])
        size = argv[-1]
        assert usage.value.code == 2
        assert f"argument --suite: '{size}' is a size, not a suite: give it as --size (tiny or full)" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_ci_request_sends_size_and_suite(live_server, secret, monkeypatch, capsys):
    monkeypatch.setenv("PTBENCH_URL", live_server.url)
    monkeypatch.setenv("PTBENCH_API_TOKEN", secret)
    assert ci(["request", "--build", "d" * 12, "--machine-class", "cpu", "--torch-version", "2.13.0", "--cases", "1",
               "--size", "tiny", "--suite", "core"]) == 0
    assert Run.objects.get(pk=capsys.readouterr().out.strip()).size == "tiny"


def test_manage_py_commands_and_the_schedule_take_size_and_suite():
    build = build_get_or_create(make_document()["build"])
    with pytest.raises(CommandError, match="'tiny' is a size, not a suite: give it as --size"):
        call_command("request_run", "--build", build_ref(build), "--suite", "tiny", "--machine-class", "cpu")
    call_command("request_run", "--build", build_ref(build), "--size", "tiny", "--suite", "core", "--machine-class", "cpu",
                 "--regimes", "static", "--workloads", QUICK)
    run = Run.objects.get()
    assert run.size == "tiny" and run.cases_expected == 1 + len(suite_workloads("core")) and "--size tiny" in run.command
    call_command("schedule_run", "--machine-class", "cpu", "--size", "tiny", "--suite", "hf", "--hour", "3")
    from django_celery_beat.models import PeriodicTask  # noqa: PLC0415 (the beat app's model)

    task = PeriodicTask.objects.get(task="dispatch.scheduled_run")
    assert json.loads(task.kwargs) == {"build": "latest", "machine_class": "cpu", "size": "tiny", "suite": "hf"}
    assert task.name == "nightly tiny hf on cpu"
    # A beat message sent before dispatch/0004 named the size "suite": it still runs at that size.
    legacy = Run.objects.get(pk=scheduled_run(build=build_ref(build), machine_class="cpu", suite="full", workloads=[QUICK],
                                              regimes=["static"]))
    assert legacy.size == "full" and legacy.cases_expected == 1


def test_a_run_request_takes_dims_and_refuses_a_bad_one_naming_it(writer, registered, monkeypatch, django_capture_on_commit_callbacks):
    """``dims`` through the API as through the service (docs/case-config.md, "Which dims")."""
    from dashboard.dispatch import broker
    from dashboard.dispatch.models import CaseTask

    monkeypatch.setattr(broker, "case_send", lambda **call: "task")
    with django_capture_on_commit_callbacks(execute=True):
        created = writer.post("/api/v1/runs/", {"build": BODY["build"], "machine_class": "cpu", "workloads": ["mlp_loop"],
                                                "regimes": ["unbacked"], "dims": ["batch"]}, format="json")
    assert created.status_code == 201, created.json()
    assert Run.objects.get(pk=created.json()["id"]).matrix["dims"] == ["batch"]
    assert list(CaseTask.objects.values_list("spec__dims", flat=True)) == [["batch"]]
    for bad in (["a/b"], "batch", [3]):
        refused = writer.post("/api/v1/runs/", {**BODY, "workloads": ["mlp_loop"], "dims": bad}, format="json")
        assert refused.status_code == 400 and [f.split(".")[0] for f in fields(refused)] == ["dims"], refused.json()
    assert Run.objects.count() == 1
