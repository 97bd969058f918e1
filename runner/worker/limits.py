"""A case's Celery time limits on this worker: the dashboard's, plus what this worker's compile pairs
may take.

The dashboard sends each case with a soft limit of 2 x its timeout (the cold and warm phases) plus a
margin (``dashboard.dispatch.services.runs.case_enqueue``); it does not know whether the worker that
takes the case measures compile pairs (``PTBENCH_COMPILE_REFERENCE``, ``PTBENCH_COMPILE_PAIRS``), and
each pair may take 2 x the timeout (``runner.engine.compile_pairs.one_pair``). A case whose pairs ran
past the dashboard's limit ended in ``SoftTimeLimitExceeded``: an infrastructure error, retried, then
failed with no result (issue #34). So the request of ``run_case`` widens the limits it was sent by the
pairs' bound before the pool starts its timer (``CaseRequest``). docs/architecture.md (the case
lifecycle).
"""
from __future__ import annotations

from celery.worker.request import Request

from runner.engine.compile_pairs import pair_time_bound_s


def case_time_limits(sent: tuple[float | None, float | None] | list | None, *, timeout_s, pairs: int) -> tuple:
    """``(hard, soft)`` seconds: the limits the case was sent with (``(hard, soft)``, either None for
    none), each widened by ``pairs`` compile pairs of ``timeout_s``; unchanged without pairs, without
    a timeout, or for a limit that was not set."""
    hard, soft = (tuple(sent) + (None, None))[:2] if sent else (None, None)
    try:
        extra = pair_time_bound_s(pairs, float(timeout_s)) if pairs and timeout_s else 0.0
    except (TypeError, ValueError):  # a message without a usable timeout: the limits it was sent with
        extra = 0.0
    return (hard + extra if hard else hard, soft + extra if soft else soft)


def case_request_class(pairs_of):
    """A ``run_case`` Request class whose limits count ``pairs_of()`` compile pairs per case (the
    worker's setting, read when each case arrives)."""

    class CaseRequest(Request):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            timeout_s = self._kwargs.get("timeout_s") if isinstance(self._kwargs, dict) else None
            self.time_limits = case_time_limits(self.time_limits, timeout_s=timeout_s, pairs=pairs_of())

    return CaseRequest
