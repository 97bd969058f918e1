"""Issue #4 end to end with real processes: Redis, PostgreSQL, the dashboard-side worker and runner
workers. Cases use the ``eager`` backend and test workloads: the dispatch is under test here, the
measurement engine has its own tests."""
from __future__ import annotations

import pytest
import redis
from django.conf import settings

from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.dispatch.services import run_request
from dashboard.results.models import Result, Run
from tests.fixtures.workers import QUICK, SLOW, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def reported_build(worker, queue_name, timeout: float = 120):
    """Once ``worker`` is ready: the build it reported (the dashboard worker registered it). Workers
    of one host share the row of an interpreter they both have."""
    wait_for(lambda: " ready." in worker.log_path.read_text(), timeout=timeout, what=f"{worker.log_path.stem} to start")
    row = wait_for(lambda: BuildEnvironment.objects.filter(machine_class=queue_name).select_related("build").first(),
                   timeout=60, what="the worker's report of its builds")
    return row.build


def request(build, queue_name, workloads, **matrix):
    return run_request(build=build, machine_class=queue_name, size="tiny", requested_by="test", workloads=workloads,
                       backend="eager", **matrix)


def finished(run_id):
    run = Run.objects.get(pk=run_id)
    return run if run.status in (Run.Status.COMPLETED, Run.Status.FAILED, Run.Status.CANCELLED) else None


def test_a_requested_run_goes_through_the_workers_and_completes(start_workers, queue_name):
    runner, dashboard = start_workers
    dashboard()
    build = reported_build(runner("gpu0"), queue_name)
    environment = BuildEnvironment.objects.get(machine_class=queue_name)
    assert environment.machine_class == queue_name and environment.source == "worker"
    assert environment.environment["build"]["torch_version"] == build.torch_version

    run = request(build, queue_name, [QUICK], regimes=["static", "backed"])
    assert run.cases_expected == 2 and run.status == Run.Status.PENDING

    run = wait_for(lambda: finished(run.id), timeout=180, what="the run to finish")
    assert run.status == Run.Status.COMPLETED
    results = Result.objects.filter(run=run)
    assert sorted(r.config.case_config.shape_regime for r in results) == ["backed", "static"]
    assert all(r.status == "pass" and r.speedup for r in results)
    assert {r.environment["worker"]["worker"].split("@")[0] for r in results} == {"gpu0"}
    cases = CaseTask.objects.filter(run=run)
    assert {c.state for c in cases} == {"done"} and all(c.result_id and c.attempts == 1 for c in cases)
    # Detection ran once, over the whole run, when its last case came in.
    from dashboard.regressions.models import AlertSummary

    wait_for(lambda: AlertSummary.objects.filter(run=run).exists(), timeout=60, what="detection of the run")
    # The run page shows where the cases went.
    from django.test import Client

    page = Client().get(f"/runs/{run.id}/").content.decode()
    assert "on the workers: done 2 · running 0 · pending 0" in page and "gpu0@" in page


def test_two_workers_on_one_queue_share_the_cases(start_workers, queue_name):
    runner, dashboard = start_workers
    dashboard()
    left, right = runner("left"), runner("right")
    build = reported_build(left, queue_name)
    reported_build(right, queue_name)
    run = request(build, queue_name, [SLOW, QUICK], regimes=["static", "backed"], dtypes=["float32"])
    assert run.cases_expected == 3  # SlowPass has no dynamic dims: static only

    run = wait_for(lambda: finished(run.id), timeout=240, what="the run to finish")
    assert run.status == Run.Status.COMPLETED
    workers = {c.worker.split("@")[0] for c in CaseTask.objects.filter(run=run)}
    assert workers == {"left", "right"}
    assert Result.objects.filter(run=run).count() == 3


def test_cancel_stops_the_running_case_and_drops_the_queued_ones(start_workers, queue_name):
    from dashboard.api.services import run_cancel

    runner, dashboard = start_workers
    dashboard()
    worker = runner("gpu0")
    build = reported_build(worker, queue_name)
    run = request(build, queue_name, [SLOW, QUICK], regimes=["static", "backed"])
    wait_for(lambda: CaseTask.objects.filter(run=run, state="running").exists(), timeout=90, what="a case to start")

    queue = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    assert queue.llen(queue_name) == 2  # the other two cases wait in Redis

    run_cancel(run_id=run.id, cancelled_by="test")

    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED
    assert set(CaseTask.objects.filter(run=run).values_list("state", flat=True)) == {"cancelled"}
    # Issue #46 item 6: their messages are gone from Redis (they stayed, each taken and skipped later).
    assert queue.llen(queue_name) == 0
    # The worker sees the flag within seconds, kills the case, and takes nothing more of the run.
    wait_for(lambda: "'outcome': 'cancelled'" in worker.log_path.read_text(), timeout=60, what="the worker to stop the case")
    assert Result.objects.filter(run=run).count() == 0


def test_an_infrastructure_error_is_retried_then_fails_the_case_but_a_failing_case_is_not(start_workers, queue_name, tmp_path):
    """A worker without the build retries (bounded) and then reports the case failed; a case that
    fails for real (an eager error) is a result on its first attempt."""
    runner, dashboard = start_workers
    dashboard()
    build = reported_build(runner("gpu0", PTBENCH_MAX_RETRIES="1"), queue_name)
    broken = run_request(build=build, machine_class=queue_name, size="tiny", requested_by="test",
                         workloads=["tests.runner.fault_workloads:EagerError"], backend="eager", regimes=["static"])
    broken = wait_for(lambda: finished(broken.id), timeout=120, what="the failing case")
    assert broken.status == Run.Status.COMPLETED
    assert Result.objects.get(run=broken).status == "eager_error"
    assert CaseTask.objects.get(run=broken).attempts == 1

    from dashboard.results.models import Build

    missing = Build.objects.create(torch_version="9.9.9", git_sha="0" * 40, local_label="", ordered_at=build.ordered_at)
    lost = request(missing, queue_name, [QUICK], regimes=["static"])
    lost = wait_for(lambda: finished(lost.id), timeout=120, what="the case without a build to fail")
    case = CaseTask.objects.get(run=lost)
    assert lost.status == Run.Status.FAILED and case.state == "failed"
    assert "BuildUnavailable" in case.error and "000000000000" in case.error
    assert Result.objects.filter(run=lost).count() == 0


def test_a_requested_run_with_dims_marks_only_those_through_the_workers(start_workers, queue_name):
    """Regime dims end to end (docs/case-config.md): the worker's case marks the named dim and the
    stored result is the dims configuration."""
    runner, dashboard = start_workers
    dashboard()
    build = reported_build(runner("gpu0"), queue_name)
    run = request(build, queue_name, [QUICK], regimes=["unbacked"], dims=["x:0"])
    run = wait_for(lambda: finished(run.id), timeout=180, what="the run to finish")
    [result] = Result.objects.filter(run=run)
    assert run.status == Run.Status.COMPLETED and result.status == "pass"
    assert result.config.key.endswith("/unbacked/float32/cpu/dims=x:0") and result.config.tags["dims"] == ["x:0"]
    assert result.environment["marked_dims"] == ["x:0"]
