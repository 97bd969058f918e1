"""The Redis transport of both sides' Celery apps: kombu's, with two repairs for a broker that goes away.

Both the dashboard's worker and the runner workers consume from Redis through kombu, which takes a
message off its queue with ``BRPOP`` and then, in a second round trip, records it as unacknowledged
(``QoS.append``: the unacked hash and index that a lost worker's messages are restored from). Redis
going away between the two (a crash, a kill, a failover) lost the message: it was no longer in its
queue, never in the unacked hash, and the consumer never saw it (``QoS.append`` raised before the
callback). Under load, 2 ingests were never stored in 54 Redis kills
(tests/faults/test_broker_outage.py, ``PTBENCH_OUTAGE_CYCLES``). Here:

1. **A message popped but not recorded is held and put back.** ``QoS.append`` failing with a
   connection error keeps the message in this process (:data:`HELD`) and raises as before (the
   consumer reconnects); the next channel that consumes (``basic_consume``) or restores
   (``restore_visible``, every ``unacked_restore_interval``) puts it back at the head of its queue,
   marked redelivered. Delivery is at least once: if Redis had recorded it after all, it comes twice,
   and every task on these queues is idempotent (docs/deploying.md). What is still not covered:
   Redis dying between the pop and sending its answer (microseconds, inside Redis), and a worker
   that exits while Redis is still away (what it holds is logged).
2. **A released connection is a connection error** (issue #33 item 4). When Redis goes away while
   the worker consumes, closing the channel restores the unacknowledged messages through the
   transport, whose connection (``transport.client``) is already released, so kombu 5.7's
   ``Channel._connparams`` raised ``AttributeError: 'NoneType' object has no attribute 'hostname'``,
   which is no connection error: the worker exited ("Unrecoverable error", 1 Redis kill in 3 under
   load). Raised as Redis' ``ConnectionError``, kombu ignores it on close and reconnects.

:func:`use_for_redis` makes it the transport of ``redis://`` and ``rediss://`` URLs in this process
(kombu's alias table), before any connection: ``dashboard/celery.py`` and ``runner/worker/app.py``.
"""
from __future__ import annotations

import logging
import threading

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis

TRANSPORT = "contract.broker_transport:Transport"

log = logging.getLogger(__name__)


class HeldMessages:
    """Messages taken off their queue whose record as unacknowledged never reached Redis, kept by
    this process until Redis answers again: ``(payload, exchange, routing_key)``, as kombu records
    them in its unacked hash."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[dict, str, str]] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def hold(self, payload: dict, exchange: str, routing_key: str) -> None:
        with self._lock:
            self._items.append((payload, exchange, routing_key))
            count = len(self._items)
        log.warning("Redis went away between taking a message off queue %r and recording it as "
                    "unacknowledged: held in this process (%d held), put back once Redis answers",
                    routing_key, count)

    def put_back(self, channel: kombu_redis.Channel) -> int:
        """Push every held message back to the head of its queue through ``channel``, in one
        transaction; Redis still away keeps them held. Returns how many went back."""
        with self._lock:
            items, self._items = self._items, []
        if not items:
            return 0
        try:
            with channel.conn_or_acquire() as client, client.pipeline() as pipe:
                for payload, exchange, routing_key in items:
                    channel._do_restore_message(payload, exchange, routing_key, pipe)
                pipe.execute()
        except channel.connection_errors:
            with self._lock:
                self._items[:0] = items
            return 0
        log.warning("put %d held message(s) back on their queues", len(items))
        return len(items)


HELD = HeldMessages()


class QoS(kombu_redis.QoS):
    def append(self, message, delivery_tag):
        try:
            super().append(message, delivery_tag)
        except self.channel.connection_errors:
            delivery = message.delivery_info
            HELD.hold(message._raw, delivery["exchange"], delivery["routing_key"])
            raise

    def restore_visible(self, *args, **kwargs):
        HELD.put_back(self.channel)
        return super().restore_visible(*args, **kwargs)


class Channel(kombu_redis.Channel):
    QoS = QoS

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:  # the transport's connection is released: Redis went away
            raise kombu_redis.redis.exceptions.ConnectionError(
                "the broker connection was released (Redis went away)")
        return super()._connparams(asynchronous=asynchronous)

    def basic_consume(self, *args, **kwargs):
        consumer_tag = super().basic_consume(*args, **kwargs)
        HELD.put_back(self)
        return consumer_tag


class Transport(kombu_redis.Transport):
    Channel = Channel


def use_for_redis() -> None:
    """Make :class:`Transport` the one kombu resolves ``redis://`` and ``rediss://`` URLs to in this
    process (kombu's own alias table; ``rediss`` keeps kombu's TLS handling, which goes by the name)."""
    TRANSPORT_ALIASES.update(redis=TRANSPORT, rediss=TRANSPORT)
