"""Issue #46 item 7: a 10 s Redis restart killed the running case and its message vanished (queue
and unacked empty): only the stale-case sweep sent it again, after 20 min here and 2 h 10 min with
the defaults. Now the case survives the restart: it goes on running, its result is stored once,
nothing waits on its queue and its message is acknowledged (no record of it is left to hand out
again after the visibility timeout). Before the restart, its worker's connections are reset while
Redis stays up: closing the lost connection's channel put the running case back on its queue, and
the worker ran it a second time once free. Real Redis (with its AOF, as compose and scripts/test.sh
run it), PostgreSQL, a runner worker and the dashboard's worker."""
from __future__ import annotations

import json
import time

import pytest
import redis

from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Result, Run
from tests.fixtures.workers import SLOW, wait_for
from tests.dispatch.test_workers import finished, reported_build, request

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue_name():
    return "cpu-restart"


def test_a_running_case_survives_a_redis_restart(start_workers, queue_name, redis_server, settings):  # noqa: F811
    runner, dashboard = start_workers
    dashboard()
    worker = runner("gpu0", PTBENCH_TEST_SLOW_BUILD_S="2.5")  # the case runs about 10 s: 4 builds of 2.5 s
    build = reported_build(worker, queue_name)
    run = request(build, queue_name, [SLOW], regimes=["static"])
    wait_for(lambda: CaseTask.objects.filter(run=run, state="running").exists(), timeout=90, what="the case to start")
    time.sleep(1)
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)

    # A reset connection (Redis up): the workers reconnect; the running case stays with its worker.
    client.client_kill_filter(_type="normal", skipme=True)
    client.client_kill_filter(_type="pubsub", skipme=True)
    wait_for(lambda: worker.log_path.read_text().count("Connected to") == 2, timeout=30, what="the worker to reconnect")
    time.sleep(1)
    redis_server.stop()
    time.sleep(4)
    redis_server.start()

    run = wait_for(lambda: finished(run.id), timeout=90, what="the case to finish after the restart")
    case = CaseTask.objects.get(run=run)
    assert run.status == Run.Status.COMPLETED and case.state == "done" and case.attempts == 1, worker.log_path.read_text()[-3000:]
    assert Result.objects.filter(run=run).count() == 1
    taken = [line for line in worker.log_path.read_text().splitlines() if "runner.run_case[" in line and line.endswith("received")]
    assert len(taken) == 1, taken  # twice: put back on its queue when the reset connection's channel closed
    assert client.llen(queue_name) == 0
    # Its message was acknowledged: no record of it waits to be handed out again. (This case's record
    # only: the unacked hash is shared by the tests on this Redis, and a runner worker killed mid-case
    # leaves its record there for the visibility timeout: tests/runner/test_worker_lifetime.py, which
    # CI's scheduler can run before this file on the same Redis, failed a count of the whole hash.)
    def records():
        return [record for record in client.hvals("unacked") if json.loads(record)[2] == queue_name]
    wait_for(lambda: not records(), timeout=20, what="the case's message to be acknowledged")
