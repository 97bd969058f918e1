"""Every status from a real cause, through the CLI and its case subprocesses; the suite goes on."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from contract.document import validate_document
from runner.engine.executor import REPO_ROOT, CaseExecutor
from contract.spec import CaseSpec

FAULTS = "tests.runner.fault_workloads"
EXPECTED = {
    "fault_none": "pass",
    "fault_eager_error": "eager_error",
    "fault_compile_error": "compile_error",
    "fault_wrong_when_compiled": "fail_accuracy",
    "fault_killed_by_signal": "crash",
    "fault_out_of_memory": "oom",
}
CLASSES = ["Passes", "EagerError", "CompileOnlyError", "WrongWhenCompiled", "KilledBySignal", "OutOfMemory"]


@pytest.fixture(scope="module")
def fault_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults") / "run.json"
    # The crash comes second: every case after it must still run.
    names = ",".join(f"{FAULTS}:{cls}" for cls in ["Passes", "KilledBySignal", *CLASSES[1:4], "OutOfMemory"])
    command = [sys.executable, "-m", "runner", "run", "--workloads", names, "--regimes", "static", "--backend", "eager",
               "--device", "cpu", "--no-warm", "--timeout", "120", "--out", str(out)]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    return completed, json.loads(out.read_text()) if out.exists() else None


@pytest.mark.slow
def test_each_fault_gets_its_status_and_the_suite_goes_on(fault_run):
    completed, document = fault_run
    assert completed.returncode == 0, completed.stderr[-3000:]
    statuses = {r["workload"]: r["status"] for r in document["results"]}
    assert statuses == EXPECTED


@pytest.mark.slow
def test_failures_carry_an_error_excerpt(fault_run):
    _, document = fault_run
    by_name = {r["workload"]: r for r in document["results"]}
    assert by_name["fault_none"]["error"] is None
    eager = by_name["fault_eager_error"]["error"]
    assert eager["type"] == "ValueError" and eager["message"] == "eager run refuses this input"
    assert "fault_workloads.py" in eager["traceback"]
    compile_error = by_name["fault_compile_error"]["error"]
    assert "TorchRuntimeError" in compile_error["type"] and "no shape rule" in compile_error["message"]
    crash = by_name["fault_killed_by_signal"]["error"]
    assert crash["type"] == "SIGKILL" and "killed by SIGKILL" in crash["message"]
    assert "max abs error 0.5" in by_name["fault_wrong_when_compiled"]["error"]["message"]
    assert by_name["fault_wrong_when_compiled"]["metrics"]["accuracy_max_abs_error"] == 0.5
    assert "can't allocate memory" in by_name["fault_out_of_memory"]["error"]["message"]


@pytest.mark.slow
def test_the_document_validates_and_the_cli_reports(fault_run):
    completed, document = fault_run
    assert validate_document(document) == []
    assert document["run"]["synthetic"] is False
    assert {w["name"] for w in document["workloads"]} == set(EXPECTED)
    passed = next(r for r in document["results"] if r["status"] == "pass")
    assert passed["repro"].startswith("python -m runner run --size tiny --workloads tests.runner.fault_workloads:Passes")
    assert passed["metrics"]["compile_time_warm_s"] is None  # --no-warm
    # Summary table on stdout, one progress line per case on stderr (not a terminal).
    assert "fault_killed_by_signal" in completed.stdout and "crash" in completed.stdout
    progress_lines = [line for line in completed.stderr.splitlines() if line.startswith("[")]
    assert len(progress_lines) == len(EXPECTED) and progress_lines[-1].startswith(f"[{len(EXPECTED)}/{len(EXPECTED)}]")


@pytest.mark.slow
def test_a_case_past_its_time_limit_is_killed_and_says_where_it_hung():
    spec = CaseSpec(workload=f"{FAULTS}:Sleeps", compile_mode="default", shape_regime="static", dtype="float32", device="cpu", backend="eager")
    # 12 s: the case reaches its sleep first (interpreter, torch, the build: 3-4 s alone, more beside
    # the other pytest worker), so the stacks it dumps name the sleep.
    result = CaseExecutor(python=sys.executable, timeout_s=12, warm=True).run(spec, workload_name="fault_sleeps", repro="r")
    assert result["status"] == "timeout"
    assert "12 s time limit" in result["error"]["message"]
    # The child dumped its stacks before it was killed: the sleeping workload is named.
    assert "fault_workloads.py" in result["error"]["traceback"]
    assert 12 <= result["duration_s"] < 40


@pytest.mark.slow
def test_a_run_stopped_from_outside_keeps_its_finished_cases(tmp_path):
    """--out is rewritten after every case: a SIGTERM (a CI or device time limit) loses only the case
    in flight, and the runner kills that case (its own session: the signal does not reach it) and
    what it started before it exits (issue #35)."""
    import signal

    from tests.runner.case_processes import left_after, sleeper_started, start_runner, wait_for

    out = tmp_path / "run.json"
    runner, mark = start_runner(f"{FAULTS}:Passes,{FAULTS}:SpawnsAndSleeps", out=out)
    try:
        wait_for(lambda: sleeper_started(mark), timeout=120, what="the second case to start")
        assert out.exists(), "no partial document after the first case"
    finally:
        os.killpg(runner.pid, signal.SIGTERM)  # the runner's group (the runner alone), like `timeout` does
        runner.wait(timeout=30)
    assert left_after(mark, 10) == []
    assert runner.returncode == 128 + signal.SIGTERM
    assert "interrupted; the finished cases are in" in out.with_suffix(".log").read_text()
    document = json.loads(out.read_text())
    assert validate_document(document) == []
    assert [r["workload"] for r in document["results"]] == ["fault_none"]
    assert document["run"]["notes"].startswith("partial: 1 of 2 cases")
