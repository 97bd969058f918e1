"""The dispatch app's services, commands, API, admin action and beat task on PostgreSQL, without
worker processes: what a worker would report is applied by calling the services directly. Sending a
case to the broker (``broker.case_send``) is replaced by a recorder; the real path, through Redis and
real workers, is test_workers.py's."""
from __future__ import annotations

import datetime as dt
import io
import json
import sys
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from dashboard.dispatch import broker, services
from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.dispatch.services.cases import stale_after
from dashboard.results.models import Build, Result, Run
from dashboard.results.selectors.common import build_ref
from dashboard.results.services import build_get_or_create
from tests.fixtures.api import fields
from tests.fixtures.workers import QUICK, SLOW
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def sent(monkeypatch) -> list[dict]:
    """Every case put on a queue: {machine_class, kwargs, soft_time_limit, time_limit}."""
    calls: list[dict] = []

    def record(**call) -> str:
        calls.append(call)
        return f"task-{len(calls)}"

    monkeypatch.setattr(broker, "case_send", record)
    return calls


@pytest.fixture
def build() -> Build:
    return build_get_or_create(make_document()["build"])


def request(build, machine_class="cpu", workloads=(QUICK,), **matrix) -> Run:
    return services.run_request(build=build, machine_class=machine_class, size="tiny", requested_by="test",
                                workloads=list(workloads), **matrix)


def dispatched(build, capture, **kwargs) -> Run:
    """A requested run whose cases went out (the request's on-commit step ran)."""
    with capture(execute=True):
        return request(build, **kwargs)


def document_for(case: CaseTask, **result_changes) -> dict:
    """The one-result document a worker hands back for ``case``."""
    result = make_result(case.workload, case.case_config.shape_regime, case.case_config.compile_mode)
    result["config"] = case.case_config.as_document()
    result.update(result_changes)
    document = make_document(run_id=str(case.run_id), results=[result])
    document["workloads"] = [case.workload_description]
    document["machine"]["machine_class"] = case.run.machine.machine_class
    return document


def started(case: CaseTask, worker: str = "gpu0@box") -> str:
    return services.case_started(case_id=case.id, worker=worker, hostname="box", run_id=str(case.run_id))


def environment_of(git_sha: str, torch_version: str = "2.13.0+cpu") -> dict:
    """What ``python -m runner environment`` says of an interpreter (the parts the dashboard reads)."""
    section = make_document(git_sha=git_sha)["build"]
    section["torch_version"] = torch_version
    del section["label"]  # a probe does not name the build: the dashboard does
    return {"build": section, "python": "3.11.7"}


# --- manage.py request_run / run_status --------------------------------------------------------------
def test_request_run_prints_the_run_id_and_queues_its_cases(build, sent, django_capture_on_commit_callbacks):
    out, err = io.StringIO(), io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("request_run", "--build", build_ref(build), "--size", "tiny", "--machine-class", "cpu",
                     "--workloads", QUICK, "--regimes", "static,backed", "--backend", "eager", stdout=out, stderr=err)
    run = Run.objects.get(pk=uuid.UUID(out.getvalue().strip()))
    assert run.status == Run.Status.PENDING and run.cases_expected == 2 and run.requested_by == "manage.py request_run"
    assert "2 cases" in err.getvalue() and "queued on cpu" in err.getvalue()
    assert [c["machine_class"] for c in sent] == ["cpu", "cpu"]
    assert {c["kwargs"]["spec"]["backend"] for c in sent} == {"eager"}
    assert set(CaseTask.objects.filter(run=run).values_list("sends", flat=True)) == {1}


@pytest.mark.parametrize("option, value, named", [
    ("--modes", "default,fastest", "--modes"),
    ("--workloads", "no_such_workload", "--workloads"),
    ("--regimes", "sideways", "--regimes"),
    ("--dtypes", "float8", "--dtypes"),
    ("--build", "0123456789ab", "--build"),
    ("--build", "latest", "--build"),  # no worker of the class reported a build
])
def test_request_run_names_the_bad_option(build, sent, option, value, named):
    args = {"--build": build_ref(build), "--size": "tiny", "--machine-class": "cpu", "--workloads": QUICK, option: value}
    with pytest.raises(CommandError) as failed:
        call_command("request_run", *[word for pair in args.items() for word in pair], stdout=io.StringIO(), stderr=io.StringIO())
    assert str(failed.value).startswith(named), str(failed.value)
    if option != "--build":
        assert value.split(",")[-1] in str(failed.value)
    assert Run.objects.count() == 0 and not sent


def test_run_status_prints_progress_and_each_case(build, sent, django_capture_on_commit_callbacks):
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static", "backed"])
    first = CaseTask.objects.filter(run=run).order_by("spec__shape_regime").first()  # backed, then static
    started(first)
    services.case_finished(case_id=first.id, document=document_for(first))
    out = io.StringIO()
    call_command("run_status", str(run.id), "--cases", stdout=out)
    text = out.getvalue()
    assert f"run {run.id}: running  (tiny on cpu, build {build})" in text
    assert "results stored: 1/2 (pass 1)" in text
    assert "cases: done 1, queued 1; workers: gpu0@box" in text
    assert "done      test_tiny_mlp default/backed/float32/cpu  gpu0@box  attempts=1  pass" in text
    assert "queued    test_tiny_mlp default/static/float32/cpu  -  attempts=0" in text
    with pytest.raises(CommandError, match="no run"):
        call_command("run_status", str(uuid.uuid4()), stdout=io.StringIO())


# --- the matrix -----------------------------------------------------------------------------------------
def test_matrix_defaults_follow_the_machine_class_and_skipped_combinations_are_recorded(build, sent):
    cpu = request(build, "cpu", workloads=(QUICK, SLOW))
    assert set(CaseTask.objects.filter(run=cpu).values_list("spec__compile_mode", flat=True)) == {"default"}
    assert set(CaseTask.objects.filter(run=cpu).values_list("spec__device", flat=True)) == {"cpu"}
    # TinyMLP in static, backed, unbacked; SlowPass has no dynamic dims: static only.
    assert cpu.cases_expected == 4 == CaseTask.objects.filter(run=cpu).count()
    assert cpu.matrix["modes"] == ["default"] and cpu.matrix["regimes"] == ["static", "backed", "unbacked"]
    assert sorted(cpu.matrix["skipped"]) == [
        "test_slow_pass: regime backed needs dynamic dims; this workload has none",
        "test_slow_pass: regime unbacked needs dynamic dims; this workload has none",
    ]

    gpu = request(build, "gpu-h100")
    modes = sorted(set(CaseTask.objects.filter(run=gpu).values_list("spec__compile_mode", flat=True)))
    assert modes == ["default", "max-autotune", "max-autotune-no-cudagraphs", "reduce-overhead"]
    assert gpu.cases_expected == 12 and gpu.matrix["device"] == "cuda" and gpu.matrix["skipped"] == []
    assert gpu.machine.machine_class == "gpu-h100"


# --- what the workers report ------------------------------------------------------------------------------
def test_a_finished_case_reported_twice_is_stored_once(build, sent, django_capture_on_commit_callbacks):
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static"])
    case = CaseTask.objects.get(run=run)
    assert started(case) == "running"
    document = document_for(case)
    assert services.case_finished(case_id=case.id, document=json.loads(json.dumps(document))) == "done"
    assert services.case_finished(case_id=case.id, document=json.loads(json.dumps(document))) == "ignored: case is done"
    case.refresh_from_db()
    run.refresh_from_db()
    assert Result.objects.filter(run=run).count() == 1 and case.result == Result.objects.get(run=run)
    assert run.status == Run.Status.COMPLETED and run.finished_at and case.finished_at
    # The run keeps its pool host; the worker that measured the case is in the result.
    assert Result.objects.get(run=run).run.machine.hostname == run.machine.hostname


def test_a_late_started_message_does_not_reopen_a_finished_case(build, sent, django_capture_on_commit_callbacks):
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static"])
    case = CaseTask.objects.get(run=run)
    services.case_finished(case_id=case.id, document=document_for(case))  # its "started" is still on the way
    assert started(case, worker="late@box") == "ignored: case is done"
    case.refresh_from_db()
    run.refresh_from_db()
    assert case.state == "done" and case.attempts == 0 and case.worker == ""
    assert run.status == Run.Status.COMPLETED


def test_a_result_for_a_cancelled_case_is_not_stored(build, sent, django_capture_on_commit_callbacks):
    from dashboard.api.services import run_cancel

    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static"])
    case = CaseTask.objects.get(run=run)
    started(case)
    run_cancel(run_id=run.id, cancelled_by="test")
    assert services.case_finished(case_id=case.id, document=document_for(case)) == "ignored: case is cancelled"
    assert Result.objects.filter(run=run).count() == 0
    assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLED


def test_a_refused_document_fails_the_case_and_the_run_finishes(build, sent, django_capture_on_commit_callbacks):
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static"])
    case = CaseTask.objects.get(run=run)
    started(case)
    assert services.case_finished(case_id=case.id, document=document_for(case, status="exploded")) == "failed"
    case.refresh_from_db()
    run.refresh_from_db()
    assert case.state == "failed" and "the worker's document was refused" in case.error and "results[0].status" in case.error
    assert Result.objects.filter(run=run).count() == 0 and run.status == Run.Status.FAILED


def test_an_infrastructure_failure_ends_the_case_without_a_result(build, sent, django_capture_on_commit_callbacks):
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static", "backed"])
    lost, done = CaseTask.objects.filter(run=run).order_by("id")
    services.case_failed(case_id=lost.id, reason="BuildUnavailable: no interpreter", worker="gpu0@box", hostname="box")
    assert Run.objects.get(pk=run.pk).status == Run.Status.PENDING  # one case still open
    services.case_finished(case_id=done.id, document=document_for(done))
    assert Run.objects.get(pk=run.pk).status == Run.Status.FAILED
    assert services.case_failed(case_id=lost.id, reason="again") == "ignored: case is failed"
    assert services.case_started(case_id=10**9, worker="w", hostname="h") == "unknown case"


# --- the stale-case sweep ------------------------------------------------------------------------------
def test_the_sweep_resends_a_silent_running_case_then_fails_it(build, sent, settings, django_capture_on_commit_callbacks):
    settings.DISPATCH_MAX_SENDS = 2
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static"])
    case = CaseTask.objects.get(run=run)
    started(case)
    case.refresh_from_db()
    assert services.cases_requeue_stale(now=case.started_at + stale_after(case) - dt.timedelta(seconds=5)) == {
        "sent": 0, "requeued": 0, "failed": 0}  # not silent for long enough yet

    assert services.cases_requeue_stale(now=case.started_at + stale_after(case) + dt.timedelta(seconds=1)) == {
        "sent": 0, "requeued": 1, "failed": 0}
    case.refresh_from_db()
    assert case.state == "queued" and case.sends == 2 and len(sent) == 2 and sent[1]["kwargs"]["case_id"] == case.id

    started(case, worker="gpu1@box")  # another worker takes it, and goes silent too
    case.refresh_from_db()
    assert case.attempts == 2
    assert services.cases_requeue_stale(now=case.started_at + stale_after(case) + dt.timedelta(seconds=1)) == {
        "sent": 0, "requeued": 0, "failed": 1}
    case.refresh_from_db()
    run.refresh_from_db()
    assert case.state == "failed" and "no word from worker gpu1@box" in case.error and "after 2 sends" in case.error
    assert run.status == Run.Status.FAILED and len(sent) == 2


def test_the_sweep_sends_a_case_that_was_never_sent(build, sent):
    run = request(build, regimes=["static"])  # the request's transaction never committed its send
    case = CaseTask.objects.get(run=run)
    assert case.sends == 0 and not sent
    assert services.cases_requeue_stale()["sent"] == 0  # just requested: its send may be on the way
    assert services.cases_requeue_stale(now=timezone.now() + dt.timedelta(minutes=6)) == {"sent": 1, "requeued": 0, "failed": 0}
    case.refresh_from_db()
    assert case.sends == 1 and case.state == "queued" and case.task_id == "task-1" and case.queued_at
    assert sent[0]["machine_class"] == "cpu" and sent[0]["kwargs"]["run_id"] == str(run.id)
    assert sent[0]["time_limit"] > sent[0]["soft_time_limit"] > case.timeout_s
    assert services.cases_requeue_stale(now=timezone.now() + dt.timedelta(minutes=6))["sent"] == 0  # once


# --- builds -------------------------------------------------------------------------------------------------
def test_a_worker_report_registers_builds_and_drops_interpreters_it_no_longer_has():
    old, new = "a" * 40, "b" * 40
    reported = [{"python": "/opt/builds/torch-2.12/bin/python", "environment": environment_of(old, "2.12.0")},
                {"python": "/opt/builds/torch-2.13/bin/python", "environment": environment_of(new, "2.13.0")}]
    assert services.worker_report(hostname="box", worker="gpu0@box", machine_class="gpu-h100", builds=reported) == 2
    rows = BuildEnvironment.objects.filter(machine_class="gpu-h100", hostname="box")
    assert sorted(rows.values_list("build__torch_version", flat=True)) == ["2.12.0", "2.13.0"]
    assert set(rows.values_list("source", flat=True)) == {"worker"}
    assert Build.objects.get(git_sha=old).label == "torch 2.12.0"

    services.worker_report(hostname="box", worker="gpu0@box", machine_class="gpu-h100", builds=reported[1:])
    assert list(rows.values_list("python", flat=True)) == ["/opt/builds/torch-2.13/bin/python"]
    assert Build.objects.filter(git_sha=old).exists()  # the build and its results stay

    # Another worker of the host reports on its own rows only.
    services.worker_report(hostname="box", worker="gpu1@box", machine_class="gpu-h100", builds=[])
    assert rows.count() == 1


def test_register_build_probes_an_interpreter():
    import torch

    out, err = io.StringIO(), io.StringIO()
    call_command("register_build", "--python", sys.executable, "--machine-class", "cpu", "--label", "this venv", stdout=out, stderr=err)
    row = BuildEnvironment.objects.get(python=sys.executable)
    assert out.getvalue().strip() == build_ref(row.build)
    assert row.source == "registered" and row.machine_class == "cpu" and row.build.label == "this venv"
    assert row.build.torch_version == torch.__version__ and err.getvalue().startswith("registered: torch")

    again = io.StringIO()
    call_command("register_build", "--python", sys.executable, "--machine-class", "cpu", stdout=io.StringIO(), stderr=again)
    assert again.getvalue().startswith("already registered") and BuildEnvironment.objects.count() == 1
    with pytest.raises(CommandError, match="^--python: "):
        call_command("register_build", "--python", "/no/such/python", stdout=io.StringIO(), stderr=io.StringIO())


# --- API, cancel, schedule, admin ---------------------------------------------------------------------
def test_the_api_requests_a_run_with_a_matrix(writer, build, sent, django_capture_on_commit_callbacks):  # noqa: F811
    body = {"build": build_ref(build), "machine_class": "cpu", "size": "tiny", "workloads": [QUICK], "modes": ["default"],
            "regimes": ["static", "unbacked"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = writer.post("/api/v1/runs/", body, format="json")
    assert response.status_code == 201, response.json()
    run = Run.objects.get(pk=response.json()["id"])
    assert run.cases_expected == 2 and run.requested_by == "api:ci"
    assert sorted(CaseTask.objects.filter(run=run).values_list("spec__shape_regime", flat=True)) == ["static", "unbacked"]
    assert len(sent) == 2

    bad_mode = writer.post("/api/v1/runs/", {**body, "modes": ["default", "ludicrous"]}, format="json")
    # The second entry is named; DRF reports a list's item errors by position ("modes.1" today).
    assert bad_mode.status_code == 400 and fields(bad_mode) in (["modes[1]"], ["modes.1"]), fields(bad_mode)
    assert "ludicrous" in bad_mode.json()["detail"]
    bad_workload = writer.post("/api/v1/runs/", {**body, "workloads": ["no_such_workload"]}, format="json")
    assert bad_workload.status_code == 400 and fields(bad_workload) == ["workloads"]
    assert Run.objects.count() == 1 and len(sent) == 2


def test_cancelling_a_run_cancels_its_open_cases(build, sent, monkeypatch, django_capture_on_commit_callbacks):
    from dashboard.api.services import run_cancel

    flagged, revoked = [], []
    monkeypatch.setattr(broker, "run_cancelled_flag_set", lambda *, run_id: flagged.append(run_id))
    monkeypatch.setattr(broker, "tasks_revoke", lambda *, task_ids: revoked.extend(task_ids))
    run = dispatched(build, django_capture_on_commit_callbacks, regimes=["static", "backed", "unbacked"])
    done, running, queued = CaseTask.objects.filter(run=run).order_by("id")
    services.case_finished(case_id=done.id, document=document_for(done))
    started(running)
    with django_capture_on_commit_callbacks(execute=True):
        run_cancel(run_id=run.id, cancelled_by="test")
    states = dict(CaseTask.objects.filter(run=run).values_list("id", "state"))
    assert states == {done.id: "done", running.id: "cancelled", queued.id: "cancelled"}
    assert flagged == [str(run.id)] and sorted(revoked) == sorted([running.task_id, queued.task_id])
    assert Result.objects.filter(run=run).count() == 1  # what was stored before stays


def test_the_scheduled_run_takes_the_latest_build_a_worker_reported(build, sent):
    from dashboard.dispatch.tasks import scheduled_run

    with pytest.raises(LookupError, match="no worker of machine class 'cpu-nightly'"):
        scheduled_run(machine_class="cpu-nightly", size="tiny", workloads=[QUICK])
    newer = "c" * 40
    services.worker_report(hostname="box", worker="cpu0@box", machine_class="cpu-nightly",
                           builds=[{"python": "/opt/old/bin/python", "environment": environment_of(build.git_sha)}])
    services.worker_report(hostname="box2", worker="cpu0@box2", machine_class="cpu-nightly",
                           builds=[{"python": "/opt/new/bin/python", "environment": environment_of(newer, "2.14.0")}])
    run = Run.objects.get(pk=scheduled_run(build="latest", machine_class="cpu-nightly", size="tiny", workloads=[QUICK],
                                           regimes=["static"]))
    assert run.build.git_sha == newer and run.requested_by == "schedule" and run.cases_expected == 1
    assert run.machine.machine_class == "cpu-nightly"


def test_schedule_run_creates_then_updates_a_periodic_task():
    from django_celery_beat.models import PeriodicTask

    out = io.StringIO()
    call_command("schedule_run", "--machine-class", "gpu-h100", "--size", "full", "--hour", "3", "--workloads", "mlp_loop", stdout=out)
    task = PeriodicTask.objects.get(name="nightly full on gpu-h100")
    assert out.getvalue().startswith("created") and task.task == "dispatch.scheduled_run" and task.queue == "ingest"
    assert json.loads(task.kwargs) == {"build": "latest", "machine_class": "gpu-h100", "size": "full", "workloads": ["mlp_loop"]}
    assert (task.crontab.hour, task.crontab.minute) == ("3", "0")
    call_command("schedule_run", "--machine-class", "gpu-h100", "--size", "full", "--hour", "4", stdout=out)
    assert PeriodicTask.objects.filter(name="nightly full on gpu-h100").get().crontab.hour == "4"


def test_the_admin_action_requests_a_run_of_the_selected_build(admin_client, build, sent, django_capture_on_commit_callbacks):
    changelist = "/admin/results/build/"
    form = admin_client.post(changelist, {"action": "request_runs", "_selected_action": [build.pk]})
    assert form.status_code == 200 and b"Request a run" in form.content and b'name="machine_class"' in form.content

    refused = admin_client.post(changelist, {"action": "request_runs", "_selected_action": [build.pk], "apply": "Request",
                                             "machine_class": "cpu", "size": "tiny", "workloads": "no_such_workload"})
    assert refused.status_code == 200 and b"no_such_workload" in refused.content and Run.objects.count() == 0

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(changelist, {"action": "request_runs", "_selected_action": [build.pk], "apply": "Request",
                                                  "machine_class": "cpu", "size": "tiny", "workloads": QUICK,
                                                  "regimes": ["static", "backed"], "timeout_s": "120"})
    assert response.status_code == 302
    run = Run.objects.get()
    assert run.build == build and run.requested_by == "admin" and run.cases_expected == 2
    assert set(CaseTask.objects.filter(run=run).values_list("timeout_s", flat=True)) == {120.0}
    assert len(sent) == 2 and {c["machine_class"] for c in sent} == {"cpu"}
