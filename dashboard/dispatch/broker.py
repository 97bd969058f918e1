"""The dashboard's side of the message contract with the runner workers (``contract.messages``)."""
from __future__ import annotations

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
    """Drop queued cases that workers have not taken yet (best effort: the flag above is the rule)."""
    if task_ids and not settings.CELERY_TASK_ALWAYS_EAGER:
        from dashboard.celery import app

        app.control.revoke(task_ids)
