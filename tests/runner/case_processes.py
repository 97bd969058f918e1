"""Finding the case processes of one runner a test started, by a mark in their environment (never
by name: other test sessions run on the same machine)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

from runner.engine.executor import REPO_ROOT
from runner.engine.lifetime import MARK_ENV, processes_with_env
from tests.fixtures.workers import wait_for

RUN_ENV = "PTBENCH_TEST_RUN"
FAULTS = "tests.runner.fault_workloads"
SLEEPER = "import time; time.sleep(3600)"  # what fault_workloads' sleepers run


def start_runner(workloads: str, *, out, env: dict | None = None, python: str = sys.executable,
                 options: tuple[str, ...] = (), device: str = "cpu") -> tuple[subprocess.Popen, str]:
    """``python -m runner run`` of ``workloads`` (eager, on ``device``, no warm phase; cases in
    ``python``; more ``options``) in a session of its own; the process and the mark its case
    processes carry."""
    mark = uuid.uuid4().hex
    command = [sys.executable, "-m", "runner", "run", "--workloads", workloads, "--regimes", "static", "--backend", "eager",
               "--modes", "default", "--device", device, "--no-warm", "--timeout", "300", "--python", python,
               "--out", str(out), *options]  # fmt: skip
    with open(out.with_suffix(".log"), "wb") as log:  # the progress lines and errors, for a failure's message
        runner = subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **(env or {}), RUN_ENV: mark},
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return runner, mark


def case_processes(mark: str) -> list[dict]:
    """The live case processes of the runner with ``mark``, and whatever they started."""
    return [p for p in processes_with_env(RUN_ENV, mark, read=(MARK_ENV,)) if MARK_ENV in p["env"]]


def sigkill_when(runner: subprocess.Popen, ready, *, what: str, timeout: float = 120):
    """Wait for ``ready()`` (its value is returned), then SIGKILL the runner alone: no handler of it
    runs (the OOM killer, a lost node). Killed also when the wait fails."""
    try:
        return wait_for(ready, timeout=timeout, what=what)
    finally:
        runner.kill()
        runner.wait(timeout=30)


def sleeper_started(mark: str) -> list[dict]:
    """The case processes once the workload's sleeper runs (the case is mid-call), else []."""
    found = case_processes(mark)
    return found if any(SLEEPER in p["command"] for p in found) else []


def left_after(mark: str, seconds: float = 10) -> list[dict]:
    """The case processes of ``mark`` still there after ``seconds`` ([] as soon as none is)."""
    deadline = time.monotonic() + seconds
    while (left := case_processes(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left
