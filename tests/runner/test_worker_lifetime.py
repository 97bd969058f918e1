"""A runner worker whose main process is killed (the OOM killer, kill -9) takes its case with it:
Celery's pool process dies with the main process, and the case with the pool process (issue #35,
docs/runner-processes.md). Real Redis, PostgreSQL and worker processes, as in tests/dispatch."""
from __future__ import annotations

import uuid

import pytest

from tests.dispatch.conftest import queue_name, start_workers  # noqa: F401 (fixtures)
from tests.dispatch.test_workers import reported_build, request
from tests.dispatch.conftest import wait_for
from tests.runner.case_processes import FAULTS, RUN_ENV, case_processes, left_after

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.mark.slow
def test_a_worker_whose_main_process_is_killed_takes_its_case_with_it(start_workers, queue_name):  # noqa: F811
    runner, dashboard = start_workers
    dashboard()
    mark = uuid.uuid4().hex
    worker = runner("gpu0", **{RUN_ENV: mark})
    build = reported_build(worker, queue_name)
    request(build, queue_name, [f"{FAULTS}:Sleeps"], regimes=["static"])
    running = wait_for(lambda: [p for p in case_processes(mark) if "runner case" in p["command"]], timeout=120,
                       what="the worker to start the case")
    assert {p["ppid"] for p in running} - {p["pid"] for p in running} != {worker.process.pid}  # started by a pool process

    worker.process.kill()  # the main process alone: its pool process and the case get no signal from us
    worker.process.wait(timeout=30)
    assert left_after(mark, 10) == []
