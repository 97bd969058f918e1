"""How many cases a worker runs at once, and what its cases are told (runner.worker.slots, issue #44)."""
from __future__ import annotations

import pytest

from runner.worker.config import ConfigError, WorkerConfig
from runner.worker.slots import case_environment, default_cases_at_once


def test_a_gpu_worker_runs_one_case_per_four_cores_of_its_share_and_32_gib_at_most_four():
    assert default_cases_at_once(device="cuda", cores=32, gpus=(2, 141.0)) == 4  # the x2 H200 kind
    assert default_cases_at_once(device="cuda", cores=16, gpus=(2, 141.0)) == 2  # 8 cores per GPU
    assert default_cases_at_once(device="cuda", cores=128, gpus=(8, 80.0)) == 2  # an H100 of 8: memory bounds it
    assert default_cases_at_once(device="cuda", cores=64, gpus=(1, 24.0)) == 1
    assert default_cases_at_once(device="cuda", cores=4, gpus=None) == 1  # nvidia-smi did not answer
    assert default_cases_at_once(device="cpu", cores=64, gpus=None) == 1


def test_several_cases_share_the_cores_as_compile_threads_and_lock_the_cpu():
    assert case_environment(1, device="cuda", cores=16, environ={}) == {}
    assert case_environment(4, device="cuda", cores=16, environ={}) == {"TORCHINDUCTOR_COMPILE_THREADS": "4"}
    assert case_environment(3, device="cpu", cores=2, environ={"TORCHINDUCTOR_COMPILE_THREADS": "2"}) == {"PTBENCH_CPU_LOCK": "1"}


def test_the_worker_reads_its_cases_at_once_and_warm_start_and_refuses_bad_values():
    config = WorkerConfig.from_env({"PTBENCH_CASES_AT_ONCE": "3", "PTBENCH_WARM_START": "all"})
    assert (config.cases_at_once, config.warm_start) == (3, "all")
    assert config.case_environment["PTBENCH_CPU_LOCK"] == "1"
    default = WorkerConfig.from_env({})
    assert (default.cases_at_once, default.warm_start, default.case_environment) == (1, "own", {})
    for variable, value in (("PTBENCH_CASES_AT_ONCE", "two"), ("PTBENCH_CASES_AT_ONCE", "65"), ("PTBENCH_WARM_START", "yes")):
        with pytest.raises(ConfigError, match=variable):
            WorkerConfig.from_env({variable: value})


def test_a_worker_of_the_second_gpu_asked_for_timing_cores_keeps_the_last_of_its_slice(monkeypatch):
    from runner.worker import slots

    monkeypatch.setattr(slots, "gpus_here", lambda environ: slots.GpuShare(2, 141.0, 1))
    monkeypatch.setattr(slots, "allowed_cpus", lambda: list(range(32)))
    monkeypatch.setattr(slots.os, "cpu_count", lambda: 32)
    assert "PTBENCH_TIMING_CPUS" not in WorkerConfig.from_env({"CUDA_VISIBLE_DEVICES": "1"}).case_environment  # opt-in
    config = WorkerConfig.from_env({"CUDA_VISIBLE_DEVICES": "1", "PTBENCH_TIMING_CPUS": "auto"})
    assert config.cases_at_once == 4
    assert config.case_environment == {"TORCHINDUCTOR_COMPILE_THREADS": "4", "PTBENCH_CASE_CPUS": ",".join(map(str, range(16, 30))),
                                       "PTBENCH_TIMING_CPUS": "30,31"}
