"""The Redis transport of both sides' Celery apps: kombu's, repaired for a broker that goes away.

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
3. **A late ack survives the reconnect** (issue #46 item 7). Both workers go on running their tasks
   while Redis is away, and a task's ack at its end goes through the channel that delivered it,
   which the consumer closed with the lost connection. It reached Redis only through the pool that
   kombu's failed restore at that close happened to leave behind; with Redis still away (or no pool
   left) it failed (kombu's "Couldn't ack") and the record stayed in the unacked hash until the
   visibility timeout handed the finished task out again (2 h for a case). An ack whose record
   removal does not reach Redis is kept in this process (:data:`PENDING_ACKS`) and done by the next
   channel to the same Redis that consumes or restores (at most ``unacked_restore_interval``
   later), before that restore could hand it out.
4. **A running case is not handed out again when its channel closes** (issue #46 item 7). The
   consumer closes its channel on any connection error, and closing restores (puts back on their
   queues) every message the channel delivered and that is not acknowledged yet: with Redis still
   reachable at that moment (a reset connection, a Redis that was back already) the case still
   running went back to its queue, and a worker (the same one, once free) ran it a second time.
   The runner worker hands in which of its messages are running cases (``use_for_redis(running=)``,
   from Celery's record of the tasks it runs; none in a cold shutdown, which ends them): a closing
   channel keeps their records in the unacked hash, and the case's end acknowledges it (3.). Should
   its process die instead, the reject that puts it back is kept the same way (kombu's restore on a
   closed channel removed the record and pushed nothing) and done by the next channel, as a record
   made visible at once (its score in the unacked index set to 0, restored on the next
   ``restore_visible``). Only the worker dying with the case leaves it to the hand-over (5.). The
   dashboard's worker hands in nothing: its tasks are short, and put back as before.
5. **Every message a live worker holds is renewed; a dead worker's is handed over within minutes.**
   kombu hands a record out again once it is older than the visibility timeout, which had to outlast
   the longest case (a worker with 3 compile pairs may run a case of the default 900 s timeout for
   7,560 s) and so left a killed worker's case waiting 2 h (issue #46 item 7). A consumer that sets
   the transport option ``handover_timeout`` (the runner workers: ``PTBENCH_HANDOVER_S``, 600 s)
   stamps each record it takes (``append``) and, at every restore (``unacked_restore_interval``),
   every record it still holds (running, taken and waiting for a free slot, held for a retry's
   countdown) and every case it runs (``use_for_redis(running=)``, kept past a reconnect) as
   delivered ``visibility_timeout - handover_timeout`` seconds before now: under every consumer's
   rule (older than the visibility timeout), renewing or not, of this release or an older one, it
   is handed out ``handover_timeout`` after its worker's last renewal, that is after its worker
   died; a worker that does not renew (an older release) keeps the visibility timeout for its own
   cases, so a mixed fleet never has a running case handed out. The stamps and the restore's
   ceiling are Redis' clock (``TIME``), not the hosts'. A consumer connected for less than the
   hand-over restores only the records put back on purpose (4.): after Redis (or the network to
   it) was away, however long, every live worker renews before any restore could find its records
   old. Without the option (the
   dashboard's worker) the records of the running cases only are renewed, as delivered now.

:func:`use_for_redis` makes it the transport of ``redis://`` and ``rediss://`` URLs in this process
(kombu's alias table), before any connection: ``dashboard/celery.py`` and ``runner/worker/app.py``.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

TRANSPORT = "contract.broker_transport:Transport"

log = logging.getLogger(__name__)


class KeptUntilRedisAnswers:
    """What this process keeps because it could not reach Redis, written there in one transaction
    through the next channel that answers (Redis still away keeps it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def _keep(self, item: tuple) -> int:
        with self._lock:
            self._items.append(item)
            return len(self._items)

    def _write(self, channel: kombu_redis.Channel, write, mine=lambda item: True) -> int:
        """``write(pipe, item)`` for each kept item that is ``mine(item)``; how many were written."""
        with self._lock:
            items = [item for item in self._items if mine(item)]
            self._items = [item for item in self._items if not mine(item)]
        if not items:
            return 0
        try:
            with channel.conn_or_acquire() as client, client.pipeline() as pipe:
                for item in items:
                    write(pipe, item)
                pipe.execute()
        except channel.connection_errors:
            with self._lock:
                self._items[:0] = items
            return 0
        return len(items)


class HeldMessages(KeptUntilRedisAnswers):
    """Messages taken off their queue whose record as unacknowledged never reached Redis:
    ``(payload, exchange, routing_key)``, as kombu records them in its unacked hash."""

    def hold(self, payload: dict, exchange: str, routing_key: str) -> None:
        count = self._keep((payload, exchange, routing_key))
        log.warning("Redis went away between taking a message off queue %r and recording it as "
                    "unacknowledged: held in this process (%d held), put back once Redis answers",
                    routing_key, count)

    def put_back(self, channel: kombu_redis.Channel) -> int:
        """Push every held message back to the head of its queue through ``channel``. Returns how
        many went back."""
        count = self._write(channel, lambda pipe, item: channel._do_restore_message(*item, pipe))
        if count:
            log.warning("put %d held message(s) back on their queues", count)
        return count


HELD = HeldMessages()


class RunningTasks:
    """Which messages this process's worker is running, as it says (:func:`use_for_redis`)."""

    def __init__(self) -> None:
        self.tags: Callable[[], Collection[str]] = tuple


RUNNING = RunningTasks()


class PendingAcks(KeptUntilRedisAnswers):
    """Acks (and rejects that put the message back: ``requeue``) that never reached Redis:
    ``(broker, unacked_key, unacked_index_key, delivery_tag, requeue)``."""

    def keep(self, channel: kombu_redis.Channel, delivery_tag: str, requeue: bool = False) -> None:
        count = self._keep((channel.broker, channel.unacked_key, channel.unacked_index_key, delivery_tag, requeue))
        log.warning("the %s of %s did not reach Redis (its channel went with the lost connection): kept in "
                    "this process (%d kept), done once a channel answers", "requeue" if requeue else "ack",
                    delivery_tag, count)

    @staticmethod
    def _do(pipe, item) -> None:
        _broker, unacked_key, index_key, tag, requeue = item
        if requeue:  # visible at once: the next restore_visible puts it back on its queue
            pipe.zadd(index_key, {tag: 0}, xx=True)
        else:
            pipe.zrem(index_key, tag).hdel(unacked_key, tag)

    def flush(self, channel: kombu_redis.Channel) -> int:
        """Do the kept acks and requeues of ``channel``'s Redis through it. Returns how many."""
        count = self._write(channel, self._do, mine=lambda item: item[0] == channel.broker)
        if count:
            log.warning("done %d kept ack(s)", count)
        return count


PENDING_ACKS = PendingAcks()


class QoS(kombu_redis.QoS):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._opened = time.monotonic()
        self._clock_offset: float | None = None  # Redis' clock less this host's, once asked

    @property
    def handover(self) -> float:
        """Seconds after its last renewal that a record of this consumer is handed out (5.); 0: the
        visibility timeout, as kombu does."""
        handover = self.channel.handover_timeout or 0
        return min(handover, self.visibility_timeout) if handover > 0 else 0

    def _stamp(self, client, *, fresh: bool = False) -> float:
        """The score of a record renewed now (5.): Redis' time, less what makes it handed out
        ``handover`` after now under the visibility timeout; without a hand-over, kombu's (this
        host's time)."""
        if not self.handover:
            return time.time()
        if fresh or self._clock_offset is None:
            seconds, microseconds = client.time()
            self._clock_offset = seconds + microseconds / 1e6 - time.time()
        return time.time() + self._clock_offset - (self.visibility_timeout - self.handover)

    def append(self, message, delivery_tag):
        try:
            if self.handover:
                self._append_stamped(message, delivery_tag)
            else:
                super().append(message, delivery_tag)
        except self.channel.connection_errors:
            delivery = message.delivery_info
            HELD.hold(message._raw, delivery["exchange"], delivery["routing_key"])
            raise

    def _append_stamped(self, message, delivery_tag) -> None:
        """kombu's ``append`` with the record's score a renewal's (5.): handed out ``handover``
        after now, should the worker die before its first renewal."""
        delivery = message.delivery_info
        payload = kombu_redis.dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        with self.channel.conn_or_acquire() as client:
            stamp = self._stamp(client)
            client.pipeline().zadd(self.unacked_index_key, {delivery_tag: stamp}) \
                .hset(self.unacked_key, delivery_tag, payload).execute()
        virtual.QoS.append(self, message, delivery_tag)

    def restore_visible(self, start=0, num=10, interval=10):
        PENDING_ACKS.flush(self.channel)  # first: a finished task's record is not handed out again
        HELD.put_back(self.channel)
        self.renew_held()
        if not self.handover:
            return super().restore_visible(start=start, num=num, interval=interval)
        # Connected for less than the hand-over: every live worker renews first (5.), however long
        # Redis was away; only the records put back on purpose (4., their score 0) go now.
        requeued_only = time.monotonic() - self._opened < self.handover
        return self._restore_older_than_visibility(start, num, interval, requeued_only=requeued_only)

    def _restore_older_than_visibility(self, start: int, num: int, interval: int, *, requeued_only: bool) -> None:
        """kombu's ``restore_visible`` with Redis' clock for the ceiling (5.)."""
        self._vrestore_count += 1
        if (self._vrestore_count - 1) % (interval or 1):
            return
        with self.channel.conn_or_acquire() as client:
            seconds, microseconds = client.time()
            ceiling = 0 if requeued_only else seconds + microseconds / 1e6 - self.visibility_timeout
            try:
                with kombu_redis.Mutex(client, self.unacked_mutex_key, self.unacked_mutex_expire):
                    visible = client.zrange(self.unacked_index_key, ceiling, 0, desc=True, byscore=True,
                                            offset=num and start, num=num, withscores=True)
                    for tag, _score in visible or []:
                        self.restore_by_tag(tag, client)
            except kombu_redis.MutexHeld:
                pass

    def renew_held(self) -> None:
        """The records of the running cases (and with a hand-over, of every message this consumer
        holds) count as delivered now (5.): a live worker's are never handed out again, however
        long they run or wait."""
        tags = set(RUNNING.tags())
        if self.handover:
            tags.update(self._held())
        if tags:
            with self.channel.conn_or_acquire() as client:
                client.zadd(self.unacked_index_key, dict.fromkeys(tags, self._stamp(client, fresh=True)), xx=True)

    def _held(self) -> set[str]:
        """The messages taken through this connection, on any of its channels, and not acknowledged:
        kombu restores through one consuming channel only, which may be another than the tasks'
        (Celery's remote control consumes on the same connection)."""
        channels = {self.channel, *getattr(self.channel.connection.cycle, "_channels", ())}
        return {tag for channel in channels if channel._qos is not None
                and channel._qos.unacked_index_key == self.unacked_index_key for tag in list(channel._qos._delivered)}

    def ack(self, delivery_tag):
        try:
            self._remove_from_indices(delivery_tag).execute()
        except (*self.channel.connection_errors, AttributeError):  # AttributeError: closed, its connection None
            PENDING_ACKS.keep(self.channel, delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        if not requeue:
            return self.ack(delivery_tag)
        # A closed channel has no exchange table left: kombu's restore there removed the record and
        # pushed nothing (the message lost). Kept instead, as an ack that cannot reach Redis.
        if self.channel.closed:
            PENDING_ACKS.keep(self.channel, delivery_tag, requeue=True)
        else:
            self.restore_by_tag(delivery_tag, leftmost=True)
        virtual.QoS.ack(self, delivery_tag)

    def restore_unacked(self, client=None):
        """At the channel's close: put back what it delivered, but for the running cases (4.)."""
        running = set(RUNNING.tags()).intersection(self._delivered)
        for tag in running:
            del self._delivered[tag]
        if running:
            log.warning("channel closed while %d case(s) it delivered run: their messages stay unacknowledged "
                        "(acknowledged when they end), not put back on their queue", len(running))
        return super().restore_unacked(client)


class Channel(kombu_redis.Channel):
    QoS = QoS
    handover_timeout = None  # seconds; the transport option of a consumer that renews all it holds (5.)
    from_transport_options = kombu_redis.Channel.from_transport_options + ("handover_timeout",)

    def __init__(self, connection, *args, **kwargs):
        client = connection.client
        # Which Redis this channel talks to, known past its close (``connection`` None then).
        self.broker = None if client is None else (client.hostname, client.port, str(client.virtual_host or ""))
        super().__init__(connection, *args, **kwargs)

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:  # the transport's connection is released: Redis went away
            raise kombu_redis.redis.exceptions.ConnectionError(
                "the broker connection was released (Redis went away)")
        return super()._connparams(asynchronous=asynchronous)

    def basic_consume(self, *args, **kwargs):
        consumer_tag = super().basic_consume(*args, **kwargs)
        PENDING_ACKS.flush(self)
        HELD.put_back(self)
        return consumer_tag


class Transport(kombu_redis.Transport):
    Channel = Channel


def use_for_redis(running: Callable[[], Collection[str]] | None = None) -> None:
    """Make :class:`Transport` the one kombu resolves ``redis://`` and ``rediss://`` URLs to in this
    process (kombu's own alias table; ``rediss`` keeps kombu's TLS handling, which goes by the name).
    ``running``: the delivery tags of the messages whose tasks this worker runs now and that a closing
    channel keeps (4.; contract imports no Celery: the runner worker asks Celery)."""
    TRANSPORT_ALIASES.update(redis=TRANSPORT, rediss=TRANSPORT)
    if running is not None:
        RUNNING.tags = running
