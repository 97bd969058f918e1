"""Timing cores (issue #44, docs/runner-processes.md section 6): where a worker runs several cases on
a GPU, its cases compile off the cores kept for timing, and the case holding the GPU's lock times on
them (runner.worker.slots.cpu_plan, runner.engine.gpu_lock). Proven on this host's own cores."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.engine.gpu_lock import CASE_CPUS_ENV, TIMING_CPUS_ENV, DeviceLock, lock_path, parse_cpus
from runner.worker.slots import case_environment, cpu_plan

ROOT = Path(__file__).resolve().parents[2]
CORES = sorted(os.sched_getaffinity(0))
needs_two_cores = pytest.mark.skipif(len(CORES) < 2, reason="needs two cores to keep one apart")


def test_each_gpu_gets_its_slice_of_the_cores_and_keeps_the_last_for_timing():
    assert cpu_plan(range(32), gpus=2, gpu_index=1, host_cpus=32) == (list(range(16, 30)), [30, 31])  # x2: 16 each, 2 kept
    assert cpu_plan(range(32), gpus=2, gpu_index=0, host_cpus=32) == (list(range(14)), [14, 15])
    assert cpu_plan(range(16), gpus=1, gpu_index=0, host_cpus=16) == (list(range(14)), [14, 15])
    assert cpu_plan(range(8, 16), gpus=2, gpu_index=1, host_cpus=32) == ([8, 9, 10, 11, 12, 13, 14], [15])  # already confined: its own set
    assert cpu_plan(range(3), gpus=1, gpu_index=0, host_cpus=3) is None  # too few to keep any apart
    assert cpu_plan(range(16), gpus=2, gpu_index=7, host_cpus=16) == ([8, 9, 10, 11, 12, 13, 14], [15])  # an index past the count: the last slice


def test_a_gpu_worker_asked_for_timing_cores_tells_its_cases_where_to_run_and_time():
    plan, auto = (list(range(14)), [14, 15]), {TIMING_CPUS_ENV: "auto"}
    found = case_environment(4, device="cuda", cores=16, environ=auto, plan=plan)
    assert (found[CASE_CPUS_ENV], found[TIMING_CPUS_ENV]) == (",".join(map(str, range(14))), "14,15")
    assert TIMING_CPUS_ENV not in case_environment(4, device="cuda", cores=16, environ={}, plan=plan)  # opt-in
    assert case_environment(1, device="cuda", cores=16, environ=auto, plan=plan) == {}  # one case: nothing to keep apart
    assert TIMING_CPUS_ENV not in case_environment(3, device="cpu", cores=16, environ=auto, plan=plan)  # a CPU case times on every core
    assert parse_cpus("auto") == set() and parse_cpus("3,1") == {1, 3}


@needs_two_cores
def test_the_lock_holder_times_on_the_timing_cores_and_goes_back_after(tmp_path, monkeypatch):
    timing = {CORES[-1]}
    monkeypatch.setenv(TIMING_CPUS_ENV, str(CORES[-1]))
    lock = DeviceLock(lock_path("GPU-cores", str(tmp_path)))
    before = os.sched_getaffinity(0)
    with lock.hold("timing+memory"):
        assert os.sched_getaffinity(0) == timing
        with lock.hold("autotune"):  # nested: the outer hold's cores
            assert os.sched_getaffinity(0) == timing
    assert os.sched_getaffinity(0) == before
    with lock.hold("first call"):  # its compile workers would inherit the timing cores: it stays
        assert os.sched_getaffinity(0) == before
    with pytest.raises(RuntimeError), lock.hold("profile"):
        raise RuntimeError("a step that fails")
    assert os.sched_getaffinity(0) == before
    assert lock.environment()["gpu_lock"]["timing_cpus"] == {"cpus": [CORES[-1]], "holds_moved": 2}


@needs_two_cores
def test_a_case_process_and_the_processes_it_starts_stay_off_the_timing_cores():
    child = ("import os, subprocess, sys\n"
             "from runner.engine.gpu_lock import confine_case\n"
             "print(confine_case())\n"
             "print(subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'],"
             " capture_output=True, text=True).stdout.strip())\n")
    env = {**os.environ, CASE_CPUS_ENV: ",".join(map(str, CORES[:-1])), TIMING_CPUS_ENV: str(CORES[-1])}
    lines = subprocess.run([sys.executable, "-c", child], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    assert lines[:2] == [str(CORES[:-1]), str(CORES[:-1])]
