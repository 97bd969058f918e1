"""The dashboard worker outlives a broker that disappears (issue #33 item 4).

With kombu 5.7's Redis transport, when Redis goes away while the worker consumes, the consumer closes
its connection; closing the channel restores the unacknowledged messages through the transport, whose
connection (``transport.client``) is already released, so ``Channel._connparams`` raises
``AttributeError: 'NoneType' object has no attribute 'hostname'``. That is not one of the transport's
connection errors, so the consumer's error handler lets it out and the worker exits ("Unrecoverable
error"), seen in 1 of 3 Redis kills under load (tests/faults/test_broker_outage.py). Raised as
Redis' ``ConnectionError`` instead, it is what it is: a lost connection, which kombu ignores on close
and recovers from by reconnecting (``CELERY_BROKER_CONNECTION_MAX_RETRIES = None``). The messages stay
in Redis's unacked index and are restored by the next connection's QoS (visibility timeout)."""
from __future__ import annotations


def released_connection_is_a_connection_error() -> None:
    """Patch ``kombu.transport.redis.Channel._connparams`` once (idempotent)."""
    from kombu.transport import redis as transport  # noqa: PLC0415 (the worker's transport, loaded with Celery)

    original = transport.Channel._connparams
    if getattr(original, "ptbench_recovery", False):
        return

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:  # the transport's connection is released: Redis went away
            raise transport.redis.exceptions.ConnectionError("the broker connection was released (Redis went away)")
        return original(self, asynchronous=asynchronous)

    _connparams.ptbench_recovery = True
    transport.Channel._connparams = _connparams
