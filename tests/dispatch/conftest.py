"""Real processes for the dispatch tests: the dashboard-side Celery worker and runner workers
(``celery -A runner.worker.app``, no Django), on the Redis and PostgreSQL that scripts/test.sh
started. Each runner worker gets its own process group, so a test can SIGKILL it whole (a machine
lost) and nothing of it outlives the test."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

ROOT = __file__.rsplit("/tests/", 1)[0]
SLOW = "tests.dispatch.workloads:SlowPass"
QUICK = "tests.runner.sample_workloads:TinyMLP"


class Worker:
    def __init__(self, command: list[str], env: dict, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w+")
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.terminated = False

    def kill(self) -> None:
        """SIGKILL the worker and everything it started (its pool, the case subprocess)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)

    def terminate(self) -> None:
        """SIGTERM (Celery's warm shutdown), once, without waiting: ``stop`` waits. Stopping
        several, signal them all first: each spends about 1.5 s closing its pool."""
        if self.process.poll() is None and not self.terminated:
            self.process.send_signal(signal.SIGTERM)
            self.terminated = True

    def stop(self) -> str:
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self.log.seek(0)
        return self.log.read()


@pytest.fixture
def queue_name():
    """A machine class of this test alone: no message of another test can reach its workers."""
    return f"cpu-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def start_workers(subprocess_env, tmp_path, queue_name):
    started: list[Worker] = []

    def runner(name: str, concurrency: int | None = 1, **env) -> Worker:
        """A runner worker: no DATABASE_URL, no Django settings; ``concurrency`` None: the worker's
        own (PTBENCH_CASES_AT_ONCE). Its cases start in fresh processes unless ``env`` sets
        PTBENCH_WARM_START (a warm process per worker costs its imports: tests/runner/test_warm_start.py)."""
        runner_env = {k: v for k, v in subprocess_env.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
        runner_env.update(PTBENCH_BROKER_URL=subprocess_env["CELERY_BROKER_URL"], PTBENCH_MACHINE_CLASS=queue_name,
                          PTBENCH_RETRY_DELAY_S="0", PTBENCH_WARM_START="off")
        runner_env.update(env)
        slots = ["--concurrency", str(concurrency)] if concurrency else []
        worker = Worker([sys.executable, "-m", "celery", "-A", "runner.worker.app", "worker", "-Q", queue_name,
                         *slots, "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle",
                         "-l", "info"], runner_env, tmp_path / f"{name}.log")
        started.append(worker)
        return worker

    def dashboard(**env) -> Worker:
        worker = Worker([sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", "ingest,analysis,alerts",
                         "--concurrency", "2", "--hostname", "dashboard@%h", "--without-gossip", "--without-mingle",
                         "-l", "info"], {**subprocess_env, **env}, tmp_path / "dashboard.log")
        started.append(worker)
        return worker

    yield runner, dashboard
    for worker in started:
        worker.terminate()
    for worker in started:
        log = worker.stop()
        print(f"--- {worker.log_path.name}\n{log[-4000:]}")


def wait_for(predicate, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
