"""A suspect's re-measurement is queued on the runner workers (issue #6's last step, through #4)."""
from __future__ import annotations

import pytest
from django.utils import timezone

from dashboard.dispatch import broker
from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.regressions.models import Remeasurement
from dashboard.regressions.services.remeasure import remeasurement_dispatch
from dashboard.results.models import Build, Result, Run
from dashboard.results.services import run_ingest
from tests.documents import make_document

pytestmark = pytest.mark.django_db

OLD_SHA, NEW_SHA = "a" * 40, "b" * 40


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(broker, "case_send", lambda **kwargs: calls.append(kwargs) or f"task-{len(calls)}")
    return calls


def _suspect():
    for sha in (OLD_SHA, NEW_SHA):
        run_ingest(document=make_document(git_sha=sha))
    result = Result.objects.filter(build__git_sha=NEW_SHA, config__tags__shape_regime="backed").select_related("series").first()
    return Remeasurement.objects.create(
        series=result.series, metric="speedup", build=Build.objects.get(git_sha=NEW_SHA),
        baseline_build=Build.objects.get(git_sha=OLD_SHA), suspect={"magnitude": 0.03},
    )


def test_both_builds_are_re_run_on_the_class_workers_when_they_have_them(sent, django_capture_on_commit_callbacks):
    request = _suspect()
    for build in (request.build, request.baseline_build):
        BuildEnvironment.objects.create(build=build, machine_class="cpu", hostname="box", python=f"/envs/{build.git_sha[:4]}/python",
                                        source="worker", reported_at=timezone.now())

    with django_capture_on_commit_callbacks(execute=True):
        run_ids = remeasurement_dispatch(remeasurement_id=request.id)

    runs = Run.objects.filter(pk__in=run_ids)
    assert {r.build_id for r in runs} == {request.build_id, request.baseline_build_id}
    config = request.series.config
    for run in runs:
        assert run.status == "pending" and run.size == "tiny" and run.cases_expected == 1
        case = CaseTask.objects.get(run=run)
        assert (case.workload, case.config_key) == (request.series.workload.name, config.key)
    assert [c["machine_class"] for c in sent] == ["cpu", "cpu"]


def test_a_two_build_suspect_runs_its_own_build_twice(sent, django_capture_on_commit_callbacks):
    request = _suspect()
    request.suspect = {**request.suspect, "rule": "two_build"}  # its rule decides on the suspect build's runs alone
    request.save()
    for build in (request.build, request.baseline_build):
        BuildEnvironment.objects.create(build=build, machine_class="cpu", hostname="box", python=f"/envs/{build.git_sha[:4]}/python",
                                        source="worker", reported_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        run_ids = remeasurement_dispatch(remeasurement_id=request.id)
    assert [r.build_id for r in Run.objects.filter(pk__in=run_ids)] == [request.build_id, request.build_id]


def test_without_a_worker_that_has_both_builds_the_request_waits(sent):
    request = _suspect()
    BuildEnvironment.objects.create(build=request.build, machine_class="cpu", hostname="box", python="/envs/new/python",
                                    source="worker", reported_at=timezone.now())

    assert remeasurement_dispatch(remeasurement_id=request.id) == []
    assert sent == [] and Run.objects.filter(status="pending").count() == 0
