"""The exclusive GPU timing lock (runner.engine.gpu_lock), proven on CPU with an explicit lock dir:
two processes serialise through it, a case's holds are recorded, and a CPU case locks nothing."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from contract.spec import CaseSpec, TimingBudget
from runner.engine.case import run_case
from runner.engine.gpu_lock import CPU_LOCK_ENV, LOCK_DIR_ENV, DeviceLock, cuda_key, exclusive, lock_path
from runner.engine.result_file import ResultFile

ROOT = Path(__file__).resolve().parents[2]

# A second process: says it is trying, holds the lock as a case's step, prints what it waited.
_CHILD = """
import sys
from pathlib import Path
from runner.engine.gpu_lock import DeviceLock
lock = DeviceLock(Path(sys.argv[1]))
Path(sys.argv[2]).write_text("trying")
with lock.hold("timing+memory"):
    Path(sys.argv[2]).write_text("held")
print(lock.environment()["gpu_lock_wait_s"])
"""


def _wait_for(path: Path, text: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and path.read_text() == text):
        assert time.monotonic() < deadline, f"{path} never said {text!r}"
        time.sleep(0.02)


def test_a_second_process_waits_until_the_first_releases_the_gpu_lock(tmp_path):
    path = lock_path("GPU-test-uuid", str(tmp_path))
    state = tmp_path / "child-state"
    with exclusive(path) as waited:
        assert waited < 1.0
        child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), str(state)], cwd=ROOT,
                                 stdout=subprocess.PIPE, text=True)
        _wait_for(state, "trying")
        time.sleep(0.5)
        assert state.read_text() == "trying"  # blocked while this process holds the lock
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and state.read_text() == "held"
    assert float(out) >= 0.45  # the child's recorded wait covers the time this process held it


def test_holds_add_up_their_waits_and_steps_and_no_path_locks_nothing(tmp_path):
    lock = DeviceLock(lock_path("GPU-0", str(tmp_path)))
    with lock.hold("timing+memory"):
        time.sleep(0.05)
    with lock.hold("profile"):
        pass
    environment = lock.environment()
    assert environment["gpu_lock"]["steps"] == ["timing+memory", "profile"]
    assert environment["gpu_lock"]["held_s"] >= 0.05 and environment["gpu_lock_wait_s"] < 1.0
    assert environment["gpu_lock"]["file"] == str(tmp_path / "ptbench-gpu-GPU-0.lock")
    unlocked = DeviceLock(None)
    with unlocked.hold("timing+memory"):
        pass
    assert unlocked.environment() == {} and DeviceLock.for_device("cpu").path is None


def test_the_lock_file_is_named_for_the_gpu_in_the_directory_the_environment_gives(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    assert lock_path("GPU-1a2b/../x") == tmp_path / "locks" / "ptbench-gpu-GPU-1a2b_.._x.lock"
    assert lock_path("GPU-1", str(tmp_path)) == tmp_path / "ptbench-gpu-GPU-1.lock"  # an explicit dir wins
    monkeypatch.delenv(LOCK_DIR_ENV)
    assert lock_path("GPU-1").parent.is_dir()  # the system temp dir


def _tiny_case(tmp_path) -> dict:
    spec = CaseSpec(workload="tests.runner.sample_workloads:TinyMLP", compile_mode="default", shape_regime="static",
                    dtype="float32", device="cpu", backend="eager",
                    timing=TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3))
    out = ResultFile(tmp_path / "case.json")
    run_case(spec, out)
    return out.read()


def test_a_cpu_case_takes_no_lock(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    record = _tiny_case(tmp_path)
    assert record["status"] == "pass", record["error"]
    assert "gpu_lock" not in record["environment"] and "gpu_lock_wait_s" not in record["environment"]
    assert not (tmp_path / "locks").exists()


def test_a_case_holds_the_lock_to_check_accuracy_time_measure_memory_and_profile_not_to_compile(tmp_path, monkeypatch):
    """The case's steps with a lock file as a GPU case has one (the lock is device-agnostic)."""
    path = lock_path("GPU-test", str(tmp_path))
    monkeypatch.setattr("runner.engine.case.DeviceLock.for_device", lambda device: DeviceLock(path))
    record = _tiny_case(tmp_path)
    assert record["status"] == "pass", record["error"]
    held = record["environment"]["gpu_lock"]
    assert held["steps"] == ["accuracy", "timing+memory", "profile"] and held["file"] == str(path)
    ends = record["environment"]["phase_end_s"]
    assert 0 < held["held_s"] <= ends["profile"] - ends["compile"]  # none of it while compiling
    assert record["environment"]["gpu_lock_wait_s"] < 1.0


def test_a_compile_time_leaves_out_what_its_first_call_waited_for_another_case_s_timing(tmp_path, monkeypatch):
    """The compiled first call autotunes while another case holds the lock for 0.6 s: the compile
    time is the first call less that wait, and the case says how long it waited."""
    import runner.engine.case as case_module

    path, locks, calls = lock_path("GPU-test", str(tmp_path)), [], []
    monkeypatch.setattr("runner.engine.case.DeviceLock.for_device", lambda device: locks.append(DeviceLock(path)) or locks[-1])
    real_first_call = case_module.timed_first_call

    def first_call(fn, inputs, spec):
        calls.append(fn)
        if len(calls) == 2:  # the compiled side's: another case times, this one's autotuning waits for it
            holding, done = threading.Event(), threading.Event()

            def other_case():
                with exclusive(path):
                    holding.set()
                    done.wait(0.6)
            other = threading.Thread(target=other_case)
            other.start()
            holding.wait(10)
            with locks[-1].hold("autotune"):
                pass
            other.join()
        return real_first_call(fn, inputs, spec)
    monkeypatch.setattr(case_module, "timed_first_call", first_call)
    record = _tiny_case(tmp_path)
    assert record["status"] == "pass", record["error"]
    waited = record["environment"]["compile_lock_wait_s"]
    assert 0.5 <= waited < 5
    ends = record["environment"]["phase_end_s"]
    assert record["metrics"]["compile_time_cold_s"] <= ends["compile"] - ends["eager"] - waited


def test_the_gpu_is_named_by_its_uuid_else_its_physical_index(monkeypatch):
    """No GPU here: torch.cuda's device queries stand in (the same UUID from every process that sees
    that GPU, whatever its CUDA_VISIBLE_DEVICES)."""
    import torch

    uuid = type("CUuuid", (), {"bytes": list(range(16))})()
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: type("Props", (), {"uuid": uuid})())
    assert cuda_key() == "GPU-000102030405060708090a0b0c0d0e0f"
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: object())  # a torch without uuid
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert cuda_key() == "index-5"


def _locked_elsewhere(path: Path) -> bool:
    """Whether another open file description of ``path`` holds the lock (as another case's would)."""
    import fcntl

    with open(path, "a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def test_autotuning_benchmarks_hold_the_lock_and_nested_holds_are_the_outer_one(tmp_path):
    """Inductor's benchmarker (the hook every autotuning benchmark goes through, torch 2.13) holds the
    case's lock while autotuning, not before or after; a hold inside a hold takes nothing more."""
    from torch._inductor.runtime.benchmarking import maybe_gpu_benchmark_lock

    lock = DeviceLock(lock_path("GPU-autotune", str(tmp_path)))
    with lock.autotuning():
        assert not _locked_elsewhere(lock.path)
        with maybe_gpu_benchmark_lock():
            assert _locked_elsewhere(lock.path)
        with lock.hold("timing+memory"), maybe_gpu_benchmark_lock():
            pass
        assert lock.first_call_hold().__class__.__name__ == "nullcontext"  # the first call compiles unlocked
    with maybe_gpu_benchmark_lock():  # the hook is unregistered after the block
        assert not _locked_elsewhere(lock.path)
    held = lock.environment()["gpu_lock"]
    assert held["autotune_lock"] == "benchmarker" and held["autotune"]["holds"] == 1
    assert held["steps"] == ["timing+memory"] and [i[0] for i in held["intervals"]] == ["autotune", "timing+memory"]
    assert all(start <= end for _, start, end in held["intervals"])


def test_without_the_hook_the_benchmarker_classes_are_wrapped_for_the_block(tmp_path, monkeypatch):
    """torch 2.11 (the GPU image's) has no ``set_gpu_benchmark_lock_context``: the benchmarker classes'
    GPU methods are wrapped for the block instead, so a compile overlaps timing and only its
    benchmark bursts hold the lock (holding the whole first call serialised six streams' compiles)."""
    import torch._inductor.runtime.benchmarking as benchmarking

    monkeypatch.delattr(benchmarking, "set_gpu_benchmark_lock_context")
    original = benchmarking.TritonBenchmarker.__dict__["benchmark_gpu"]
    seen = []
    monkeypatch.setattr(benchmarking.TritonBenchmarker, "benchmark_gpu",
                        lambda self, *a, **k: seen.append(_locked_elsewhere(lock.path)) or 1.0)
    lock = DeviceLock(lock_path("GPU-old-torch", str(tmp_path)))
    with lock.autotuning():
        assert lock.first_call_hold().__class__.__name__ == "nullcontext"
        assert not _locked_elsewhere(lock.path)
        assert benchmarking.TritonBenchmarker().benchmark_gpu(lambda: None) == 1.0
    assert seen == [True]
    benchmarking.TritonBenchmarker().benchmark_gpu(lambda: None)  # restored: unlocked again
    assert seen == [True, False]
    held = lock.environment()["gpu_lock"]
    assert held["autotune_lock"] == "benchmarker (patched)" and held["autotune"]["holds"] == 1
    monkeypatch.setattr(benchmarking.TritonBenchmarker, "benchmark_gpu", original)


def test_without_hook_or_benchmarker_the_first_compiled_call_holds_the_lock(tmp_path, monkeypatch):
    import runner.engine.gpu_lock as gpu_lock
    import torch._inductor.runtime.benchmarking as benchmarking

    monkeypatch.delattr(benchmarking, "set_gpu_benchmark_lock_context")
    monkeypatch.setattr(gpu_lock, "BENCHMARK_METHODS", ())
    lock = DeviceLock(lock_path("GPU-old-torch", str(tmp_path)))
    with lock.autotuning(), lock.first_call_hold():
        assert _locked_elsewhere(lock.path)
    assert lock.environment()["gpu_lock"]["autotune_lock"] == "first call"
    assert lock.environment()["gpu_lock"]["steps"] == ["first call"]


def test_a_cpu_case_locks_when_its_worker_runs_several_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(CPU_LOCK_ENV, "1")
    assert DeviceLock.for_device("cpu").path == tmp_path / "ptbench-gpu-cpu.lock"
    monkeypatch.setenv(CPU_LOCK_ENV, "0")
    assert DeviceLock.for_device("cpu").path is None
