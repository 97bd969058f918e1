"""Fault injection on the services that scripts/test.sh started: Redis stopped and started again
with the same configuration (read back from it), a real dashboard worker."""
from __future__ import annotations

import subprocess
import sys
import time
from urllib.parse import urlparse

import pytest
import redis

from tests.dispatch.conftest import ROOT, Worker


class RedisServer:
    """The test run's Redis: ``stop`` (as a crash would: no RDB snapshot) and ``start`` again."""

    def __init__(self, url: str):
        parsed = urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.db = int(parsed.path.lstrip("/") or 0)
        self.client = redis.Redis(host=self.host, port=self.port, socket_timeout=5, retry=None)  # as up()
        config = {**self.client.config_get("*")}
        self.args = ["--bind", config["bind"], "--port", str(self.port), "--save", config["save"],
                     "--appendonly", config["appendonly"], "--dir", config["dir"], "--daemonize", "yes",
                     "--pidfile", config["pidfile"], "--logfile", config["logfile"]]
        self.appendonly = config["appendonly"] == "yes"

    def up(self) -> bool:
        """One probe. redis-py 6+ retries a refused connection 3 times with backoff by default
        (about 4 s against a stopped server), which every poll of a stop or a start paid."""
        try:
            return bool(redis.Redis(host=self.host, port=self.port, socket_timeout=1, retry=None).ping())
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        try:
            self.client.shutdown(nosave=True)  # no RDB; the AOF (if on) is flushed, as on a restart
        except redis.ConnectionError:
            pass
        deadline = time.monotonic() + 20
        while self.up() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not self.up(), "Redis did not stop"

    def start(self) -> None:
        subprocess.run(["redis-server", *self.args], check=True)
        deadline = time.monotonic() + 20
        while not self.up() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert self.up(), "Redis did not start again"


@pytest.fixture
def redis_server(settings):
    server = RedisServer(settings.CELERY_BROKER_URL)
    yield server
    if not server.up():
        server.start()
    # Kills leave the broker as a crash does: an acknowledged message whose removal the AOF had not yet
    # written comes back after the restart. Nothing of a fault test may reach the next test's worker
    # (it ingested a stale run into test_durable's database once), so its queues go with it.
    redis.Redis(host=server.host, port=server.port, db=server.db, socket_timeout=5).flushdb()


@pytest.fixture
def dashboard_worker(subprocess_env, tmp_path):
    """Start a real dashboard worker (queues ingest, analysis, alerts) with extra environment."""
    started: list[Worker] = []

    def start(name: str = "dashboard", **env) -> Worker:
        worker = Worker([sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", "ingest,analysis,alerts",
                         "--concurrency", "1", "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle",
                         "--without-heartbeat", "-l", "info"], {**subprocess_env, **env}, tmp_path / f"{name}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.terminate()
    for worker in started:
        print(f"--- {worker.log_path.name}\n{worker.stop()[-3000:]}")


__all__ = ["ROOT"]
