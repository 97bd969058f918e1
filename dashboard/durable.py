"""Sending to the broker after a commit without failing what committed.

A request or a task that stored something and then cannot reach Redis must still answer for what it
stored: the send is logged and left to a beat sweep (undetected runs: ``regressions.sweep``; unsent
cases: ``dispatch.requeue_stale_cases``), never raised after the commit (the client would get a 500
for a write that happened, and its retry would find nothing left to do)."""
from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, transaction

log = logging.getLogger(__name__)

# Options of a Celery task that the database unreachable for a while (a restart, a failover) must
# not lose: tried again 2 s, 4 s, ... at most 45 s apart (under the dashboard's visibility timeout);
# what runs out of tries is left to the sweep.
DB_RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2, "retry_backoff_max": 45,
            "retry_jitter": True, "max_retries": 8}


def send_logged(send: Callable[[], object], *, what: str) -> bool:
    """Call ``send`` now; a failure (the broker down, a timeout) is logged, not raised."""
    try:
        send()
    except Exception:  # noqa: BLE001 (whatever the broker raises: the sweep sends it later)
        log.exception("could not send %s (broker unreachable?); left to the sweep", what)
        return False
    return True


def send_after_commit(send: Callable[[], object], *, what: str) -> None:
    """``send`` once the current transaction commits, through :func:`send_logged`."""
    transaction.on_commit(lambda: send_logged(send, what=what))
