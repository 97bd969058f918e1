"""Issue #46 item 7: a runner worker killed with its case (kill -9, a machine lost) left the case's
message to the broker's visibility timeout, which had to outlast the longest case: 7,200 s, so the
case came back after two hours. Now a live worker renews every message it holds and a dead one's is
handed to another worker ``PTBENCH_HANDOVER_S`` after its last renewal (600 s by default), never a
live one's: not a case that runs longer than the hand-over, nor one taken and waiting for a free
slot or a retry's countdown. Real Redis, PostgreSQL, runner workers and the dashboard's worker."""
from __future__ import annotations

import time
import uuid

import pytest
import redis
from django.conf import settings
from kombu import Queue

from contract.messages import RUN_CASE
from dashboard.celery import app
from dashboard.dispatch.broker import run_cancelled_flag_set
from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Result, Run
from tests.dispatch.test_workers import finished, reported_build, request
from tests.fixtures.workers import SLOW, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# The hand-over here (renewed every second), instead of 600 s every 10 s.
FAST = {"PTBENCH_HANDOVER_S": "4", "PTBENCH_RESTORE_INTERVAL_S": "1"}


def received(worker, task_id: str) -> int:
    return sum(line.endswith(f"runner.run_case[{task_id}] received") for line in worker.log_path.read_text().splitlines())


def test_a_killed_workers_case_goes_to_another_within_the_handover_and_a_running_one_never(start_workers, queue_name):
    """SIGKILL of the worker's whole process group (its pool and the case) mid-case: another worker
    of the class gets the case the hand-over after the dead one's last renewal (before: the
    visibility timeout, two hours) and it is stored once. The rescuer's own run of it lasts about
    three hand-overs with a slot free beside it: a copy handed out meanwhile would run there. Beside
    it the rescuer holds a case taken and not started (a retry's countdown of two hand-overs): it is
    renewed too, and runs once."""
    runner, dashboard = start_workers
    dashboard()
    doomed = runner("doomed", **FAST)
    build = reported_build(doomed, queue_name)
    run = request(build, queue_name, [SLOW], regimes=["static"])
    case = CaseTask.objects.get(run=run)
    wait_for(lambda: CaseTask.objects.filter(pk=case.pk, state="running").exists(), timeout=90, what="the case to start")

    doomed.kill()
    killed = time.monotonic()
    rescuer = runner("rescuer", concurrency=2, PTBENCH_TEST_SLOW_BUILD_S="1.5", **FAST)
    # The bound: the hand-over (4 s) after the rescuer connects (its start, 5-15 s here), not 7,200 s.
    wait_for(lambda: CaseTask.objects.filter(pk=case.pk, attempts=2).exists(), timeout=60, what="the lost case to be sent again")
    handed_over = time.monotonic() - killed
    held_run = str(uuid.uuid4())
    run_cancelled_flag_set(run_id=held_run)  # so that, once started, it ends at once
    handover = int(FAST["PTBENCH_HANDOVER_S"])
    held = app.send_task(RUN_CASE, kwargs={"case_id": 0, "run_id": held_run}, queue=Queue(queue_name), countdown=2 * handover + 1)

    run = wait_for(lambda: finished(run.id), timeout=120, what="the redelivered case to finish")
    wait_for(lambda: f"runner.run_case[{held.id}] succeeded" in rescuer.log_path.read_text(), timeout=60, what="the held case")
    case.refresh_from_db()
    log = rescuer.log_path.read_text()[-3000:]
    assert run.status == Run.Status.COMPLETED, log
    assert case.state == "done" and case.attempts == 2 and case.worker.startswith("rescuer@"), (handed_over, log)
    assert (case.finished_at - case.started_at).total_seconds() > 2 * handover
    assert received(rescuer, case.task_id) == 1, log  # twice: its record was handed out while it ran
    assert received(rescuer, held.id) == 1, log  # twice: handed out while it waited
    assert Result.objects.filter(run=run).count() == 1
    assert Result.objects.get(run=run).environment["worker"]["worker"].startswith("rescuer@")
    assert redis.Redis.from_url(settings.CELERY_BROKER_URL).llen(queue_name) == 0
