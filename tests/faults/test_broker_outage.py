"""#33 item 4: the dashboard worker, started as docker-compose.yml starts it, survives Redis going
away under load and coming back: it reconnects, never exits, and every ingest sent is stored.
(Killing Redis under load crashed it 1 time in 3: kombu's "Unrecoverable error: 'NoneType' object
has no attribute 'hostname'" while the gossip step closed its channel on a dead connection.)"""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml

from dashboard.pipeline.tasks import ingest_run_document
from dashboard.results.models import Run
from tests.dispatch.conftest import ROOT, Worker, wait_for
from tests.documents import make_document
from tests.faults.conftest import redis_server  # noqa: F401 (fixture)

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def redis_kill(server) -> None:
    """SIGKILL the Redis server, as a crash or an OOM kill would (no shutdown, no goodbye to clients)."""
    pidfile = Path(server.args[server.args.index("--pidfile") + 1])
    os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
    wait_for(lambda: not server.up(), timeout=20, what="Redis gone")


def compose_worker_command() -> list[str]:
    """The dashboard worker's command line in docker-compose.yml, run with this interpreter."""
    command = yaml.safe_load((Path(ROOT) / "docker-compose.yml").read_text())["services"]["worker"]["command"]
    assert command[:4] == ["celery", "-A", "dashboard", "worker"], command
    return [sys.executable, "-m", *command]


def test_the_dashboard_worker_survives_redis_going_away_under_load(redis_server, subprocess_env, tmp_path):  # noqa: F811
    worker = Worker(compose_worker_command() + ["--hostname", "outage@%h"], subprocess_env, tmp_path / "worker.log")
    sent: list[str] = []

    def send(count: int) -> None:
        for _ in range(count):
            document = make_document()
            ingest_run_document.delay(document)
            sent.append(document["run"]["id"])

    try:
        send(1)
        wait_for(lambda: Run.objects.filter(id__in=sent).count() == 1, timeout=120, what="the worker's first ingest")
        for cycle in range(5):
            send(6)  # under load: ingests and the detections they start
            time.sleep(0.3 * cycle)
            redis_kill(redis_server)
            # Down 0.5 to 3.3 s: the worker tries again 2 s after the loss, then 4 s after that
            # (kombu's ensure_connection), so the first cycles come back on its first try and the
            # last two after a failed one; a longer outage only waits longer for the same tries.
            time.sleep(0.5 + 0.7 * cycle)
            assert worker.process.poll() is None, f"the worker exited while Redis was down (cycle {cycle})"
            redis_server.start()
            send(2)
            wait_for(lambda: Run.objects.filter(id__in=sent).count() == len(sent), timeout=180,
                     what=f"every ingest after Redis came back (cycle {cycle})")
            assert worker.process.poll() is None, f"the worker exited after Redis came back (cycle {cycle})"
    finally:
        log = worker.stop()
        print(log[-6000:])  # shown with a failure: why the worker stopped
    assert "Unrecoverable error" not in log, log[-3000:]
