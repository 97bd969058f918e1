"""Cases forked from a warm process (issue #44, runner.engine.warm_start, docs/runner-processes.md
section 7): each runs alone in a session of its own with empty caches of its own, says how it was
started, dies with its children on a time limit and with the runner that asked for it, and a case
the warm process cannot take runs in a fresh interpreter. The warm process here imports torch and
the compiler only (PTBENCH_WARM_IMPORTS): the families' libraries would cost this host seconds."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid

import pytest

from contract.spec import CaseSpec, TimingBudget
from runner.engine.artifacts import ArtifactKeeper
from runner.engine.executor import REPO_ROOT, CaseExecutor, child_environment
from runner.engine.lifetime import is_running
from runner.engine.warm_start import COMPILER_IMPORTS, IMPORTS_ENV, WarmProcess, WarmStarter, WarmStartUnavailable
from tests.runner.case_processes import FAULTS, RUN_ENV, case_processes, left_after, sleeper_started
from tests.fixtures.workers import wait_for

TINY = TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    process = WarmProcess.start(sys.executable, tmp_path_factory.mktemp("warm"), {**child_environment(None), IMPORTS_ENV: COMPILER_IMPORTS})
    yield process
    process.stop()


def _spec(workload: str, **changes) -> CaseSpec:
    fields = dict(workload=workload, compile_mode="default", shape_regime="static", dtype="float32", device="cpu",
                  backend="eager", import_allowed=True, timing=TINY)
    return CaseSpec(**{**fields, **changes})


def _run(starter, workload: str, *, timeout_s: float = 120, artifacts=None, **changes) -> dict:
    executor = CaseExecutor(python=sys.executable, timeout_s=timeout_s, warm=False, warm_start=starter, artifacts=artifacts)
    return executor.run(_spec(workload, **changes), workload_name=workload, repro="")


def test_forked_cases_start_alone_in_their_own_session_with_empty_caches_of_their_own(warm, tmp_path):
    """The second keeps its compile trace: TORCH_TRACE, which torch read at the warm process's import,
    is read again in the case."""
    keeper = ArtifactKeeper(directory=tmp_path, max_bytes=4 << 20)
    results = [_run(warm.starter(), "tests.runner.sample_workloads:TinyMLP", artifacts=keeper if kept else None)
               for kept in (False, True)]
    assert "artifact" not in results[0] and results[1]["artifact"]["kind"] == "torch_trace"
    assert results[1]["artifact"]["raw_bytes"] > 0
    started = [r["environment"]["case_process"] for r in results]
    for result, process in zip(results, started):
        assert result["status"] == "pass", result["error"]
        assert process["started_by"] == "warm fork" and process["own_session"] and process["pid"] != warm.process.pid
        assert 0 <= process["start_s"] < 60  # recorded (bench/case_start.py measures it)
        assert process["caches"]["files_at_start"] == 0
    inductor, triton = ({p["caches"][k] for p in started} for k in ("inductor", "triton"))
    assert len(inductor) == 2 and len(triton) == 2 and not inductor & triton  # no case shares a cache directory
    assert not any(path.startswith(os.path.dirname(next(iter(inductor)))) for path in list(inductor)[1:])


def test_a_forked_case_out_of_time_is_killed_with_the_child_it_started(warm, monkeypatch):
    mark = uuid.uuid4().hex
    monkeypatch.setenv(RUN_ENV, mark)  # the case's environment, and so its child's
    seen: list = []
    watcher = threading.Thread(target=lambda: seen.append(wait_for(lambda: sleeper_started(mark), timeout=120,
                                                                   what="the case's child to start")), daemon=True)
    watcher.start()
    result = _run(warm.starter(), f"{FAULTS}:SpawnsAndSleeps", timeout_s=25)
    watcher.join(timeout=5)
    assert result["status"] == "timeout", result["error"]
    assert seen, "the planted child never started"
    sleeper = next(p for p in seen[0] if "time.sleep(3600)" in p["command"] and "-c" in p["command"])
    assert not left_after(mark, 10)  # the child gone, and the case
    wait_for(lambda: not is_running(sleeper["ppid"]), timeout=10, what="the case to go")
    assert warm.process.poll() is None  # the warm process lives on for the next case


_RUNNER = """
import sys
from runner.engine.executor import CaseExecutor
from runner.engine.warm_start import WarmStarter
from tests.runner.test_warm_start import _spec
executor = CaseExecutor(python=sys.executable, timeout_s=600, warm=False, warm_start=WarmStarter(sys.argv[1], sys.executable, int(sys.argv[2])))
executor.run(_spec(sys.argv[3]), workload_name="x", repro="")
"""


def test_a_forked_case_dies_with_the_runner_that_asked_for_it(warm):
    """The runner (a worker's pool process) is not the case's parent: the case's watchdog follows it,
    and the case's sentinel takes the group's child along."""
    mark = uuid.uuid4().hex
    runner = subprocess.Popen([sys.executable, "-c", _RUNNER, str(warm.socket_path), str(warm.process.pid),
                               f"{FAULTS}:SpawnsAndSleeps"], cwd=REPO_ROOT, env={**os.environ, RUN_ENV: mark},
                              start_new_session=True)
    try:
        running = wait_for(lambda: sleeper_started(mark), timeout=120, what="the case's child to start")
    finally:
        runner.kill()
        runner.wait(timeout=30)
    case_pids = {p["ppid"] for p in running} - {p["pid"] for p in running}
    assert not left_after(mark, 10), case_processes(mark)
    # (a process as large as a case takes a moment to exit once killed)
    wait_for(lambda: not any(is_running(pid) for pid in case_pids), timeout=10, what=f"the case {case_pids} to go")
    assert warm.process.poll() is None


def test_a_case_the_warm_process_cannot_take_runs_in_a_fresh_interpreter(warm, tmp_path):
    gone = WarmStarter(tmp_path / "no.sock", sys.executable, server=2**22 + 12345)
    with pytest.raises(WarmStartUnavailable, match="gone"):
        gone.spawn([sys.executable, "-m", "runner", "case"], env={}, cwd=tmp_path, stdout=open(os.devnull, "w"))
    # A variant's environment variables are read at torch's import: only a fresh interpreter takes them.
    result = _run(warm.starter(), "tests.runner.sample_workloads:TinyMLP", env_overrides={"PTBENCH_TEST_VARIANT": "1"})
    assert result["status"] == "pass", result["error"]
    process = result["environment"]["case_process"]
    assert process["started_by"] == "subprocess" and process["warm_fork_skipped"] == "a variant's environment variables"


@pytest.mark.slow
def test_inductor_compiles_in_a_forked_case_into_its_own_empty_cache(warm):
    result = _run(warm.starter(), "tests.runner.sample_workloads:TinyMLP", backend="inductor", timeout_s=600)
    assert result["status"] == "pass", result["error"]
    assert result["environment"]["case_process"]["started_by"] == "warm fork"
    assert result["environment"]["case_process"]["caches"]["files_at_start"] == 0
    caches = result["environment"]["compile_caches"]
    assert caches.get("fxgraph_cache_miss") == 1 and not caches.get("fxgraph_cache_hit")


def test_the_warm_process_is_named_for_the_session_check(warm):
    """tests/conftest.py counts a leftover warm process (and its forks) by its command line."""
    with open(f"/proc/{warm.process.pid}/comm") as comm:
        assert comm.read().strip() == "ptbench-warm"
    with open(f"/proc/{warm.process.pid}/cmdline", "rb") as cmdline:
        assert b"-m\0runner\0warm-server" in cmdline.read()
