"""No case process outlives its runner (issue #35, docs/runner-processes.md): a runner killed with
SIGKILL (no handler runs) or stopped with SIGTERM takes its case and what the case started with it;
a worker that starts ends what a dead runner left on its device; the session check finds leftovers."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from runner.engine import lifetime
from runner.engine.executor import REPO_ROOT
from tests.fixtures.processes import SESSION_ENV, leftover_case_processes
from tests.fixtures.workers import wait_for
from tests.runner.case_processes import (
    FAULTS,
    SLEEPER,
    case_processes,
    left_after,
    sigkill_when,
    sleeper_started,
    start_runner,
)

@pytest.mark.slow
def test_a_runner_killed_with_sigkill_mid_case_takes_its_case_and_its_children_with_it(tmp_path):
    runner, mark = start_runner(f"{FAULTS}:SpawnsAndSleeps", out=tmp_path / "run.json")
    running = sigkill_when(runner, lambda: sleeper_started(mark), what="the case to start its sleeper")
    # The case, its sentinel and the process the workload started, in the case's group.
    assert len(running) == 3 and {p["pgid"] for p in running} == {running[0]["pgid"]} != {runner.pid}
    assert left_after(mark, 10) == []


@pytest.mark.slow
def test_a_runner_killed_with_sigkill_mid_compile_pair_takes_both_sides_with_it(tmp_path):
    runner, mark = start_runner(f"{FAULTS}:SleepsInCompilePairs", out=tmp_path / "run.json",
                                options=("--compile-reference", sys.executable, "--compile-pairs", "1"))

    def both_sleeping() -> list[dict]:
        running = case_processes(mark)
        return running if sum(SLEEPER in p["command"] for p in running) == 2 else []

    running = sigkill_when(runner, both_sleeping, what="both sides of the pair to start their sleepers")
    assert sum("runner compile-once" in p["command"] for p in running) == 4  # each side and its sentinel
    assert left_after(mark, 10) == []


@pytest.mark.slow
def test_a_case_started_through_a_wrapper_follows_the_runner_by_its_watchdog(tmp_path):
    """A build's python that is a script starting python as its child (no exec): the case's parent
    is the script, so it watches the runner itself and kills its group when the runner is gone."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\n{sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    runner, mark = start_runner(f"{FAULTS}:SpawnsAndSleeps", out=tmp_path / "run.json", python=str(wrapper))
    running = sigkill_when(runner, lambda: sleeper_started(mark), what="the case to start its sleeper")
    assert any(p["command"].startswith("/bin/sh") for p in running)  # the wrapper leads the group: no sentinel
    assert left_after(mark, 10) == []


@pytest.mark.slow
def test_a_worker_that_starts_ends_what_a_dead_runner_left_on_its_device(tmp_path):
    """A process that left the case's group (its own session) survives the runner's SIGKILL; the
    next worker on the device finds it by the mark in its environment, ends it, and logs it."""
    runtime = tmp_path / "runtime"
    env = {"PTBENCH_RUNTIME_DIR": str(runtime)}
    runner, mark = start_runner(f"{FAULTS}:EscapesAndSleeps", out=tmp_path / "run.json", env=env)
    sigkill_when(runner, lambda: sleeper_started(mark), what="the case to start its sleeper")
    escaped = wait_for(lambda: [p for p in case_processes(mark) if len(case_processes(mark)) == 1], timeout=10,
                       what="the case and its sentinel to go")[0]
    assert SLEEPER in escaped["command"] and escaped["pgid"] == escaped["pid"]
    records = list((runtime / "cpu").glob("*.json"))
    assert len(records) == 1 and json.loads(records[0].read_text())["owner"] == runner.pid
    case = json.loads(records[0].read_text())["pid"]  # killed, but a big process may take a moment to exit
    wait_for(lambda: not lifetime.is_running(case), timeout=10, what="the case process to finish exiting")

    worker_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "CUDA_VISIBLE_DEVICES")}
    worker_env.update(env, PTBENCH_BROKER_URL=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:1/0"),
                      PTBENCH_MACHINE_CLASS=f"cpu-test-{mark[:8]}", PTBENCH_WARM_START="off")  # no case here: no imports to pay
    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "runner.worker.app", "worker", "-Q", worker_env["PTBENCH_MACHINE_CLASS"],
                                   "--concurrency", "1", "--without-gossip", "--without-mingle", "-l", "info"],
                                  cwd=REPO_ROOT, env=worker_env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        line = wait_for(lambda: next((x for x in log_path.read_text().splitlines() if "ended stale case process group" in x), None),
                        timeout=120, what="the worker to end the stale case")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    assert f"killed pids {escaped['pid']}" in line and f"left by runner pid {runner.pid}" in line and "on cpu" in line
    assert case_processes(mark) == [] and not records[0].exists()  # (the worker's own probe may have one now)


def _sleeper(env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SLEEPER], env={**os.environ, **env}, start_new_session=True)


def test_records_of_a_live_runner_are_left_alone_and_a_dead_ones_ended(tmp_path, monkeypatch):
    """Two workers may share a device slot: only a group whose runner is gone is stale."""
    monkeypatch.setenv(lifetime.RUNTIME_ENV, str(tmp_path))
    ours = lifetime.start([sys.executable, "-c", SLEEPER], env=dict(os.environ))
    dead_owner = subprocess.Popen(["true"])
    dead_owner.wait()
    orphan = _sleeper({lifetime.MARK_ENV: "m" * 32})
    slot = tmp_path / lifetime.device_slot()
    (slot / "orphan.json").write_text(json.dumps({"pid": orphan.pid, "started": lifetime.start_ticks(orphan.pid), "mark": "m" * 32,
                                                  "owner": dead_owner.pid, "owner_started": 1, "command": "x"}))
    try:
        ended = lifetime.end_stale_cases()
        assert [(e["pid"], e["killed"], e["left"]) for e in ended] == [(orphan.pid, [orphan.pid], [])]
        assert orphan.wait(timeout=5) == -signal.SIGKILL
        assert ours.poll() is None and [p.name.split("-")[0] for p in slot.iterdir()] == [str(ours.pid)]
    finally:
        lifetime.end(ours)
        orphan.kill()
    assert list(slot.iterdir()) == [] and ours.returncode == -signal.SIGKILL


def test_the_device_slot_follows_cuda_visible_devices():
    assert lifetime.device_slot({"CUDA_VISIBLE_DEVICES": "3"}) == "gpu-3"
    assert lifetime.device_slot({"CUDA_VISIBLE_DEVICES": "GPU-1a2b/c"}) == "gpu-GPU-1a2b_c"
    assert lifetime.device_slot({"CUDA_VISIBLE_DEVICES": ""}) == "cpu"


def test_the_session_check_finds_a_case_process_left_behind():
    """What the suite's end-of-session check (tests/conftest.py) would report, and only this session's."""
    left = _sleeper({lifetime.MARK_ENV: "x" * 32})
    other_session = _sleeper({lifetime.MARK_ENV: "y" * 32, SESSION_ENV: "another-session"})
    try:
        found = leftover_case_processes(os.environ[SESSION_ENV], grace_s=0.5)
        assert [p["pid"] for p in found] == [left.pid]
    finally:
        left.kill()
        other_session.kill()
        left.wait()
        other_session.wait()
    assert leftover_case_processes(os.environ[SESSION_ENV], grace_s=0.5) == []
