"""Requested runs take the families' names and the suites' names (#28, docs/families.md): through the
API, the dispatch service a schedule and a variant call, checked against contract/families.json."""
from __future__ import annotations

import pytest

from contract.suites import suite_workloads
from dashboard.dispatch import broker, services
from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Run
from dashboard.results.services import build_get_or_create
from tests.fixtures.api import fields
from tests.documents import make_document

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


@pytest.fixture
def sent(monkeypatch) -> list[dict]:
    calls: list[dict] = []
    monkeypatch.setattr(broker, "case_send", lambda **call: calls.append(call) or f"task-{len(calls)}")
    return calls


def request(writer, **body):
    writer.post("/api/v1/builds/", {"torch_version": "2.11.0+cu130", "git_sha": SHA}, format="json")
    return writer.post("/api/v1/runs/", {"build": SHA[:12], "machine_class": "gpu-h100", **body}, format="json")


def test_a_run_request_takes_family_names_with_their_options(writer, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = request(writer, workloads=["hf:BertForMaskedLM@batch", "timm:resnet50"], modes=["default"],
                           regimes=["static", "unbacked"], dtypes=["bfloat16"])
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    cases = sorted(CaseTask.objects.filter(run=run).values_list("workload", "spec__shape_regime", "spec__dtype"))
    assert cases == [("hf:BertForMaskedLM@batch", "static", "bfloat16"), ("hf:BertForMaskedLM@batch", "unbacked", "bfloat16"),
                     ("timm:resnet50", "static", "bfloat16"), ("timm:resnet50", "unbacked", "bfloat16")]
    assert len(sent) == 4 and run.cases_expected == 4
    assert "--workloads hf:BertForMaskedLM@batch,timm:resnet50" in run.command


@pytest.mark.parametrize("name, says", [
    ("hf:NoSuchModel", "no such model or option set in its family"),
    ("hf:BertForMaskedLM@fast", "no such model or option set in its family"),
    ("timm:", "no such model or option set in its family"),
])
def test_an_unknown_family_name_is_a_400_naming_workloads(writer, name, says):
    response = request(writer, workloads=[name])
    assert response.status_code == 400 and fields(response) == ["workloads"]
    assert says in response.json()["errors"][0]["message"] and Run.objects.count() == 0


def test_a_suite_name_stands_for_its_workloads(writer, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = request(writer, workloads=["torchvision", "mlp_loop"], modes=["default"], regimes=["static"], dtypes=["float32"])
    assert response.status_code == 201, response.json()
    names = sorted(CaseTask.objects.values_list("workload", flat=True))
    assert len(names) == 23 and "mlp_loop" in names and "torchvision:resnet50" in names  # 22 torchvision models
    assert set(names) - {"mlp_loop"} == set(suite_workloads("torchvision"))
    assert not any("@" in n for n in names)


def test_the_suites_expand_to_the_catalog_and_the_listed_models():
    assert len(suite_workloads("core")) == 9
    assert (len(suite_workloads("hf")), len(suite_workloads("timm")), len(suite_workloads("torchvision"))) == (48, 19, 22)
    assert len(suite_workloads("all")) == 9 + 48 + 19 + 22  # the dist suite's cases need several devices: not in all
    # dist stands for its two models' distributed cases: DDP / FSDP x both orders x checkpointing or not.
    assert len(suite_workloads("dist")) == 16 and "dist:gpt@train+fsdp+compile_first+checkpoint" in suite_workloads("dist")
    assert not any(name.startswith("dist:") for name in suite_workloads("all"))


def test_a_schedule_or_a_variant_run_takes_family_names_through_the_same_service(sent, django_capture_on_commit_callbacks):
    # dispatch.tasks.scheduled_run and a variant's run call run_request with the matrix they were given.
    build = build_get_or_create(make_document(git_sha=SHA)["build"])
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_request(build=build, machine_class="gpu-h100", size="full", requested_by="schedule",
                                   workloads=["hf"], modes=["default"], regimes=["static"], dtypes=["bfloat16"])
    # 48 hf models, GoogleFnet left out: float32 only (FFT has no bfloat16 kernel), as planning skips it
    assert run.cases_expected == 47 and CaseTask.objects.filter(run=run, workload="hf:BertForMaskedLM").count() == 1
    assert not CaseTask.objects.filter(run=run, workload="hf:GoogleFnet").exists()
    with pytest.raises(services.MatrixError) as bad:
        services.run_request(build=build, machine_class="gpu-h100", size="full", requested_by="schedule",
                             workloads=["hf:Nope"])
    assert bad.value.field == "workloads"
