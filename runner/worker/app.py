"""The runner workers' Celery application, configured from the environment (``config``)."""
from __future__ import annotations

from celery import Celery
from celery.worker import state as worker_state
from kombu import Queue

from runner.worker.config import WorkerConfig
from contract.broker_transport import use_for_redis
from contract.messages import (
    CASE_FAILED,
    CASE_FINISHED,
    CASE_STARTED,
    COMMIT_RANGE_LISTED,
    DASHBOARD_QUEUE,
    INTAKE_DONE,
    RUN_CASE,
    WORKER_REPORT,
)


def running_cases() -> list[str]:
    """The delivery tags of the cases this worker runs now (Celery's record of its started tasks): a
    channel closed on a lost connection keeps their messages instead of putting them back on their
    queue, where a worker took them a second time (contract/broker_transport.py, issue #46 item 7).
    None in a cold shutdown, which ends them: their messages go back at once."""
    if worker_state.should_terminate not in (None, False):
        return []
    return [request.message.delivery_tag for request in list(worker_state.active_requests)
            if request.name == RUN_CASE and request.message is not None]


config = WorkerConfig.from_env()
# A case taken off its queue as Redis goes away is put back; a running one is not (contract/broker_transport.py).
use_for_redis(running=running_cases)

# Not the current app: a process that also holds the dashboard's app keeps that one current.
app = Celery("ptbench-runner", broker=config.broker_url or None, set_as_current=False)
app.conf.update(
    imports=("runner.worker.startup", "runner.worker.tasks", "runner.worker.intake"),  # startup: stale cases ended before any case runs
    # A case is acknowledged only once its result is handed on: a worker that dies mid-case (killed,
    # machine lost) leaves it to another worker of the class. One case at a time per pool process,
    # PTBENCH_CASES_AT_ONCE pool processes (runner.worker.slots), unless --concurrency says otherwise.
    task_acks_late=True,
    worker_concurrency=config.cases_at_once,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    # A case goes on running while Redis is away (a restart, a failover): cancelling it on connection
    # loss killed it and its message vanished until the stale-case sweep (2 h 10 min by default),
    # issue #46 item 7. Its result is handed on (notify retries until Redis answers) and its message
    # acknowledged: an ack that its closed channel cannot deliver is done by the reconnected one
    # (contract/broker_transport.py). A worker lost meanwhile leaves the case to PTBENCH_HANDOVER_S,
    # and the dashboard stores nothing twice.
    worker_cancel_long_running_tasks_on_connection_loss=False,
    task_ignore_result=True,
    task_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    # Every message this worker holds (running, waiting for a slot or a retry's countdown) and every
    # case it runs (running_cases) is renewed at each restore: a lost worker's case is handed to
    # another PTBENCH_HANDOVER_S after its last renewal, never a live one's. A worker that does not
    # renew (an older release) keeps the visibility timeout, the same on the dashboard and every
    # worker (contract/broker_transport.py, 5.).
    broker_transport_options={
        "visibility_timeout": config.visibility_timeout_s,
        "handover_timeout": config.handover_s,
        "unacked_restore_interval": config.restore_interval_s,
        "unacked_restore_throttle": 1,
    },
    task_queues=[Queue(config.machine_class)] if config.machine_class else [],
    task_default_queue=config.machine_class or "celery",
    task_routes={name: {"queue": DASHBOARD_QUEUE} for name in (CASE_STARTED, CASE_FINISHED, CASE_FAILED, WORKER_REPORT,
                                                              COMMIT_RANGE_LISTED, INTAKE_DONE)},
    worker_hijack_root_logger=False,
)
