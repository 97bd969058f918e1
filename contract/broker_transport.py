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
3. **A task still running is neither handed out again nor left unacknowledged.** Both workers go
   on running their tasks while Redis is away (``worker_cancel_long_running_tasks_on_connection_loss``
   off, issue #46 item 7), but closing the lost connection's channel restored every message it had
   delivered, running ones too: when Redis still took a connection at that moment (a shutdown
   flushing its AOF) the running case went back to its queue and ran a second time. And the case's
   ack at its end went through that closed channel, whose transport the consumer had released: it
   failed ("Couldn't ack"), so the record stayed in the unacked hash and the case came back after the
   visibility timeout (2 h by default; CI saw the record 20 s after the case was done). Now a
   channel closing keeps the messages of tasks this worker runs (:func:`running_delivery_tags`),
   and an ack on a released channel reaches Redis through a fresh connection with the same
   parameters.

:func:`use_for_redis` makes it the transport of ``redis://`` and ``rediss://`` URLs in this process
(kombu's alias table), before any connection: ``dashboard/celery.py`` and ``runner/worker/app.py``.
"""
from __future__ import annotations

import logging
import threading

import redis
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

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


# The requests this worker process has started and not finished: Celery's own record
# (``celery.worker.state.active_requests``), handed over by :func:`use_for_redis`; empty in a
# process that is no worker.
ACTIVE_REQUESTS: list = []


def running_delivery_tags() -> set[str]:
    """Delivery tags of the tasks this worker process has started and not finished."""
    tags = set()
    for request in [request for requests in ACTIVE_REQUESTS for request in list(requests)]:
        message = getattr(request, "message", None)
        if message is not None and message.delivery_tag:
            tags.add(message.delivery_tag)
    return tags


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

    def restore_unacked(self, client=None):
        running = running_delivery_tags().intersection(self._delivered)
        for tag in running:  # acknowledged when it ends, through ack() below
            self._delivered.pop(tag, None)
        if running:
            log.warning("channel closed with %d running task(s): their messages stay unacknowledged "
                        "until they end, not handed out again", len(running))
        return super().restore_unacked(client)

    def ack(self, delivery_tag):
        if self.channel.connection is not None and self.channel.connection.client is not None:
            return super().ack(delivery_tag)
        # The channel that delivered it was closed with its connection (Redis went away meanwhile):
        # the record goes through a fresh connection to the same Redis.
        with redis.Redis(**self.channel.redis_params) as client:
            self._remove_from_indices(delivery_tag, client.pipeline()).execute()
        virtual.QoS.ack(self, delivery_tag)


class Channel(kombu_redis.Channel):
    QoS = QoS

    def __init__(self, connection, *args, **kwargs):
        super().__init__(connection, *args, **kwargs)
        self.redis_params = connection.redis_params  # outlives the channel's close (``connection`` None)

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

    def __init__(self, client, *args, **kwargs):
        super().__init__(client, *args, **kwargs)
        # Kept past the connection's release (which drops ``self.client``) for a late ack.
        vhost = str(client.virtual_host or "").strip("/")
        self.redis_params = {"host": client.hostname or "127.0.0.1", "port": client.port or self.default_port,
                             "username": client.userid or None, "password": client.password or None,
                             "db": int(vhost) if vhost.isdigit() else 0, "ssl": bool(client.ssl),
                             "socket_timeout": 10, "socket_connect_timeout": 10}


def use_for_redis(active_requests=None) -> None:
    """Make :class:`Transport` the one kombu resolves ``redis://`` and ``rediss://`` URLs to in this
    process (kombu's own alias table; ``rediss`` keeps kombu's TLS handling, which goes by the name).
    ``active_requests``: the worker's record of the tasks it runs (Celery's
    ``celery.worker.state.active_requests``: contract imports no Celery), whose messages a closing
    channel keeps."""
    TRANSPORT_ALIASES.update(redis=TRANSPORT, rediss=TRANSPORT)
    if active_requests is not None and not any(active_requests is known for known in ACTIVE_REQUESTS):
        ACTIVE_REQUESTS.append(active_requests)
