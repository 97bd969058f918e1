"""Requested runs and schedules take regime dims (docs/case-config.md, "Which dims"): each case's
spec and configuration key carry them, a workload that declares no such dim is left out with its
reason in the run's matrix, and a bad list is refused naming ``dims``."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from dashboard.dispatch import broker, services, tasks
from dashboard.dispatch.models import CaseTask
from dashboard.results.services import build_get_or_create
from tests.documents import make_document

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


@pytest.fixture
def build(monkeypatch):
    monkeypatch.setattr(broker, "case_send", lambda **call: "task")
    return build_get_or_create(make_document(git_sha=SHA)["build"])


def test_a_requested_run_marks_only_the_named_dims_and_says_what_it_left_out(build, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_request(build=build, machine_class="gpu-h100", size="full", requested_by="test",
                                   workloads=["hf:BertForMaskedLM", "bert_encoder"], modes=["default"],
                                   regimes=["static", "unbacked"], dtypes=["float32"], dims=["batch"])
    cases = sorted(CaseTask.objects.filter(run=run).values_list("workload", "config_key", "spec__dims"))
    assert cases == [
        ("bert_encoder", "default/static/float32/cuda", None),
        ("hf:BertForMaskedLM", "default/static/float32/cuda", None),
        ("hf:BertForMaskedLM", "default/unbacked/float32/cuda/dims=batch", ["batch"]),
    ]
    assert run.matrix["dims"] == ["batch"]
    assert any(line.startswith("bert_encoder: dims batch: declares no such dynamic dim") for line in run.matrix["skipped"])
    assert "--dims batch" in run.command
    repro = CaseTask.objects.get(run=run, config_key__endswith="dims=batch").repro
    assert "--regimes unbacked" in repro and "--dims batch" in repro


def test_a_run_without_dims_keeps_its_matrix_and_keys(build, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_request(build=build, machine_class="gpu-h100", size="full", requested_by="test",
                                   workloads=["mlp_loop"], modes=["default"], regimes=["backed"], dtypes=["float32"])
    assert "dims" not in run.matrix and "--dims" not in run.command
    assert list(CaseTask.objects.values_list("config_key", flat=True)) == ["default/backed/float32/cuda"]


@pytest.mark.parametrize("dims", [["a/b"], "batch,,x=1", [3]])
def test_bad_dims_are_refused_naming_the_field_and_nothing_is_written(build, dims):
    with pytest.raises(services.MatrixError) as caught:
        services.run_request(build=build, machine_class="gpu-h100", size="full", requested_by="test", workloads=["mlp_loop"], dims=dims)
    assert caught.value.field == "dims" and not CaseTask.objects.exists()


def test_a_schedule_takes_dims_through_the_same_service(build, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run_id = tasks.scheduled_run(build=SHA[:12], machine_class="gpu-h100", size="tiny", workloads=["resnet_train"],
                                     modes=["default"], regimes=["backed"], dtypes=["amp"], dims=["batch"])
    [case] = CaseTask.objects.filter(run_id=run_id)
    assert case.config_key == "default/backed/amp/cuda/dims=batch"


def test_request_run_refuses_a_bad_dims_argument_naming_it(build):
    with pytest.raises(CommandError) as caught:
        call_command("request_run", "--build", SHA[:12], "--size", "tiny", "--machine-class", "gpu-h100", "--dims", "a/b")
    assert "--dims" in str(caught.value)


def test_the_admin_run_request_takes_dims_and_names_a_bad_one(admin_client, build, django_capture_on_commit_callbacks):
    changelist, chosen = "/admin/results/build/", {"action": "request_runs", "_selected_action": [build.pk], "apply": "Request",
                                                   "machine_class": "cpu", "size": "tiny", "workloads": "resnet_train",
                                                   "regimes": ["backed"]}
    refused = admin_client.post(changelist, {**chosen, "dims": "a/b"})
    assert refused.status_code == 200 and b"is not a dim role" in refused.content and not CaseTask.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(changelist, {**chosen, "dims": "batch"})
    assert response.status_code == 302
    assert list(CaseTask.objects.values_list("config_key", flat=True)) == ["default/backed/float32/cpu/dims=batch"]


def test_schedule_run_stores_dims_in_its_task():
    import io
    import json

    from django_celery_beat.models import PeriodicTask

    call_command("schedule_run", "--machine-class", "gpu-h100", "--size", "full", "--dims", "batch", stdout=io.StringIO())
    task = PeriodicTask.objects.get(name="nightly full dims=batch on gpu-h100")
    assert json.loads(task.kwargs)["dims"] == ["batch"]
