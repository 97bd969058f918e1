"""The dashboard's side of the message contract with the runner workers (``contract.messages``)."""
from __future__ import annotations

import json

import redis
from django.conf import settings
from kombu import Queue

from contract.messages import CANCELLED_TTL_S, RUN_CASE, cancelled_key


def case_send(*, machine_class: str, kwargs: dict, soft_time_limit: float, time_limit: float) -> str:
    """Put one case on its machine class's queue; returns the Celery task id. Without a broker
    (tasks run eagerly) the case runs in this process once the caller's transaction commits (after
    the one running, when a case's end sent it: ``inprocess.case_run_queued``)."""
    from django.db import transaction

    from dashboard.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:
        from dashboard.dispatch.inprocess import case_run_queued

        transaction.on_commit(lambda: case_run_queued(machine_class=machine_class, message=kwargs))
        return "in-process"

    result = app.send_task(
        RUN_CASE, kwargs=kwargs, queue=Queue(machine_class), soft_time_limit=soft_time_limit, time_limit=time_limit
    )
    return result.id


def run_cancelled_flag_set(*, run_id: str) -> None:
    """Tell the workers (which have no database) that a run is cancelled: a Redis key on the broker."""
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return  # tasks run in-process: there is no worker to tell
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=5)
    client.set(cancelled_key(run_id), "1", ex=CANCELLED_TTL_S)


def tasks_revoke(*, task_ids: list[str]) -> None:
    """Tell the workers to drop these tasks should one reach them (a message a worker already holds)."""
    if task_ids and not settings.CELERY_TASK_ALWAYS_EAGER:
        from dashboard.celery import app

        app.control.revoke(task_ids)


# kombu's Redis transport keeps a queue as one list per priority step: the queue's own name for
# priority 0, then the name, this separator and the step (kombu.transport.redis PRIORITY_STEPS).
PRIORITY_SEPARATOR, PRIORITY_STEPS = "\x06\x16", (3, 6, 9)


def queued_cases_remove(*, machine_class: str, task_ids: list[str]) -> int:
    """Take these tasks' messages off the machine class's queue in Redis, so that they never run
    (issue #46: a cancelled run's messages stayed queued, each taken and skipped by a worker later);
    returns how many were removed. A message a worker took meanwhile is not in the list: the revoke
    and the cancel flag stop it there."""
    wanted = set(task_ids)
    if not wanted or not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return 0
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=5)
    removed = 0
    for name in [machine_class] + [f"{machine_class}{PRIORITY_SEPARATOR}{step}" for step in PRIORITY_STEPS]:
        for raw in client.lrange(name, 0, -1):
            try:
                task_id = json.loads(raw)["headers"]["id"]
            except (ValueError, KeyError, TypeError):
                continue
            if task_id in wanted:
                removed += client.lrem(name, 1, raw)
    return removed
