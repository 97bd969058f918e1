"""#34: a case with compile pairs could outrun the Celery soft limit the dashboard sent (2 x timeout +
margin, while each pair may take 2 x timeout more): SoftTimeLimitExceeded, an infrastructure error,
retried, then failed with no result. The worker widens the limits by its pairs' bound before the
pool starts the case's timer."""
from __future__ import annotations

import dataclasses
import json

from celery.utils.imports import symbol_by_name
from celery.worker.request import create_request_cls
from kombu.message import Message

from runner.engine.compile_pairs import CompilePairs, pair_time_bound_s
from runner.worker import tasks
from runner.worker.limits import case_time_limits


def test_the_limits_grow_by_two_timeouts_per_pair():
    assert pair_time_bound_s(3, 600) == 3600
    assert case_time_limits((1560, 1500), timeout_s=600, pairs=3) == (5160, 5100)
    assert case_time_limits([1560, 1500], timeout_s="600", pairs=1) == (2760, 2700)
    assert case_time_limits((1560, 1500), timeout_s=600, pairs=0) == (1560, 1500)  # no pairs: as sent
    assert case_time_limits((None, 1500), timeout_s=600, pairs=3) == (None, 5100)  # no hard limit stays none
    assert case_time_limits(None, timeout_s=600, pairs=3) == (None, None)
    assert case_time_limits((1560, 1500), timeout_s=None, pairs=3) == (1560, 1500)
    assert case_time_limits((1560, 1500), timeout_s="soon", pairs=3) == (1560, 1500)
    pairs = CompilePairs(reference=None, pairs=3)
    assert pairs.time_bound_s(600) == 3600


class RecordingPool:
    """Stands in for the prefork pool: what limits its timer would get (the pool is Celery's)."""

    def __init__(self):
        self.calls = []

    def apply_async(self, target, **options):
        self.calls.append(options)


def _pool_limits(*, timeout_s: float, soft: float, hard: float) -> dict:
    """Send run_case through the runner app's own message format and the worker's request class."""
    task = tasks.run_case
    sent = tasks.app.amqp.as_task_v2("case-1", task.name, kwargs={"case_id": 1, "run_id": "r", "timeout_s": timeout_s},
                                     soft_time_limit=soft, time_limit=hard)
    message = Message(body=json.dumps(sent.body), headers=sent.headers, content_type="application/json",
                      content_encoding="utf-8", delivery_info={})
    pool = RecordingPool()
    request_cls = create_request_cls(symbol_by_name(task.Request), task, pool, "worker@test", None, app=tasks.app)
    request_cls(message, app=tasks.app, task=task).execute_using_pool(pool)
    [call] = pool.calls
    return {"soft": call["soft_timeout"], "hard": call["timeout"]}


def test_a_worker_with_compile_pairs_gives_the_case_time_for_them(monkeypatch):
    # The dashboard's limits for a 600 s case: 2 x 600 + 300 margin, hard 60 s later (case_enqueue).
    monkeypatch.setattr(tasks, "config", dataclasses.replace(tasks.config, compile_reference="/usr/bin/python3", compile_pairs=3))
    assert _pool_limits(timeout_s=600, soft=1500, hard=1560) == {"soft": 1500 + 3 * 2 * 600, "hard": 1560 + 3 * 2 * 600}


def test_a_worker_without_compile_pairs_keeps_the_limits_it_was_sent(monkeypatch):
    monkeypatch.setattr(tasks, "config", dataclasses.replace(tasks.config, compile_reference="", compile_pairs=3))
    assert _pool_limits(timeout_s=600, soft=1500, hard=1560) == {"soft": 1500, "hard": 1560}
