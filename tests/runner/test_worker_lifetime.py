"""A runner worker stopped mid-case takes its case with it (issue #35, docs/runner-processes.md).
Real Redis, PostgreSQL and worker processes, as in tests/dispatch."""
from __future__ import annotations

import os
import signal
import uuid

import pytest

from runner.engine.lifetime import is_running
from tests.fixtures.workers import wait_for
from tests.dispatch.test_workers import reported_build, request
from tests.runner.case_processes import FAULTS, RUN_ENV, case_processes

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["main", "pool"])
def test_a_worker_stopped_mid_case_takes_its_case_with_it(start_workers, queue_name, target):  # noqa: F811
    """``main``: SIGKILL to the worker's main process alone (the OOM killer, kill -9): Celery's pool
    process dies with it, and the case with the pool process. ``pool``: SIGTERM to the pool process
    (a cold shutdown): the task stops there, and the case's group is killed on the way out."""
    runner, dashboard = start_workers
    dashboard()
    mark = uuid.uuid4().hex
    worker = runner("gpu0", **{RUN_ENV: mark})
    build = reported_build(worker, queue_name)
    assert "no stale case processes on cpu (" in worker.log_path.read_text()  # it looked, before its first case
    request(build, queue_name, [f"{FAULTS}:Sleeps"], regimes=["static"])
    running = wait_for(lambda: [p for p in case_processes(mark) if "runner case" in p["command"]], timeout=120,
                       what="the worker to start the case")
    [pool] = {p["ppid"] for p in running} - {p["pid"] for p in running}
    assert pool != worker.process.pid  # started by a pool process
    if target == "main":
        worker.process.kill()  # the main process alone: the pool process and the case get no signal from us
        worker.process.wait(timeout=30)
    else:
        os.kill(pool, signal.SIGTERM)
    # (A worker that lives on may take the case again, redelivered: only these processes must go.)
    wait_for(lambda: not any(is_running(p["pid"]) for p in running), timeout=10, what=f"the case processes {running} to go")
    worker.process.kill()  # a case taken again would hold a warm shutdown for its whole length
