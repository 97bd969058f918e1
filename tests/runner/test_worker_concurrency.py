"""Several cases at once on one runner worker (issue #44, docs/runner-processes.md sections 6-7):
they run together, each forked from the worker's warm process, each with caches of its own, and
no two ever hold the device's lock at the same time. Real Redis, PostgreSQL and worker processes,
as in tests/dispatch; on the CPU the worker takes the lock as a GPU worker does (PTBENCH_CPU_LOCK)."""
from __future__ import annotations

import itertools

import pytest

from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Result, Run
from runner.engine.warm_start import COMPILER_IMPORTS
from tests.fixtures.workers import wait_for
from tests.dispatch.test_workers import finished, reported_build, request

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SLOW_CALLS = "tests.dispatch.workloads:SlowBuildSlowCalls"


@pytest.mark.slow
def test_a_worker_runs_cases_together_that_never_hold_the_lock_together(start_workers, queue_name, tmp_path):  # noqa: F811
    runner, dashboard = start_workers
    dashboard()
    worker = runner("gpu0", concurrency=None, PTBENCH_CASES_AT_ONCE="3", PTBENCH_WARM_START="own",
                    PTBENCH_WARM_IMPORTS=COMPILER_IMPORTS, PTBENCH_GPU_LOCK_DIR=str(tmp_path / "locks"))
    build = reported_build(worker, queue_name)
    log = worker.log_path.read_text()
    assert "3 case(s) at once on cpu" in log and "PTBENCH_CPU_LOCK=1" in log and "warm process" in log
    assert "concurrency: 3 (prefork)" in log  # the worker's own setting, no --concurrency given

    run = request(build, queue_name, [SLOW_CALLS], regimes=["static", "backed", "unbacked"])
    run = wait_for(lambda: finished(run.id), timeout=300, what="the run to finish")
    assert run.status == Run.Status.COMPLETED
    results = list(Result.objects.filter(run=run))
    assert len(results) == 3 and all(r.status == "pass" for r in results), [(r.status, r.error) for r in results]

    tasks = list(CaseTask.objects.filter(run=run))
    assert max(t.started_at for t in tasks) < min(t.finished_at for t in tasks)  # all three ran at once
    assert len({t.worker for t in tasks}) == 1

    started = [r.environment["case_process"] for r in results]
    assert all(s["started_by"] == "warm fork" and s["own_session"] and s["caches"]["files_at_start"] == 0 for s in started), started
    assert len({s["caches"]["inductor"] for s in started}) == 3 and len({s["pid"] for s in started}) == 3

    holds = [r.environment["gpu_lock"] for r in results]
    assert all(h["file"] == str(tmp_path / "locks" / "ptbench-gpu-cpu.lock") for h in holds)
    assert all("timing+memory" in h["steps"] for h in holds)
    for (one, a), (other, b) in itertools.combinations(enumerate(holds), 2):
        for (step_a, from_a, to_a), (step_b, from_b, to_b) in itertools.product(a["intervals"], b["intervals"]):
            assert to_a <= from_b or to_b <= from_a, f"case {one}'s {step_a} and case {other}'s {step_b} held the lock together"
