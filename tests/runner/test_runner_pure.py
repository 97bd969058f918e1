"""Pure parts of the engine: statistics, block sizing, planning, classification. No compile."""
from __future__ import annotations

import dataclasses
import signal

import pytest

from runner.engine.environment import machine_class_for
from runner.engine.executor import ChildExit, classify_exit, signal_name
from contract.planning import current_repro, plan_cases, repro_command
from runner.engine.progress import Progress, estimate_remaining, format_duration
from runner.engine.result_file import finite_json
from contract.spec import CaseSpec, TimingBudget
from runner.engine.stats import bootstrap_speedup, median, percentile
from runner.engine.timing import TimedCallFailed, calls_per_block, keep_timing, measure_interleaved
from tests.runner.fault_workloads import Passes
from tests.runner.sample_workloads import TinyMLP


def test_median_and_percentile():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert percentile([0.0, 10.0], 0.25) == 2.5
    with pytest.raises(ValueError):
        median([])


def test_bootstrap_is_deterministic_and_brackets_the_point_estimate():
    eager = [2.0 + 0.01 * (i % 7) for i in range(40)]
    compiled = [1.0 + 0.02 * (i % 5) for i in range(40)]
    first = bootstrap_speedup(eager, compiled, seed=3)
    again = bootstrap_speedup(eager, compiled, seed=3)
    assert first == again
    assert first.low <= first.speedup <= first.high
    assert first.speedup == pytest.approx(median([e / c for e, c in zip(eager, compiled)]))
    assert 0 < first.noise < 0.05


def test_bootstrap_noise_is_zero_without_variation_and_grows_with_it():
    steady = bootstrap_speedup([2.0] * 20, [1.0] * 20)
    assert steady.speedup == 2.0 and steady.noise == 0.0
    noisy = bootstrap_speedup([2.0, 3.0, 1.5, 2.5, 2.2] * 4, [1.0, 0.8, 1.4, 1.2, 1.9] * 4)
    assert noisy.noise > 0.05


def test_bootstrap_refuses_unpaired_samples():
    with pytest.raises(ValueError, match="unpaired"):
        bootstrap_speedup([1.0, 2.0], [1.0])


def test_calls_per_block_fills_the_target_with_the_faster_function():
    assert calls_per_block(1e-3, 1e-3, 0.025) == 25
    # The compiled side is 2x slower: 25 calls keep its block at 50 ms, under 4 targets.
    assert calls_per_block(1e-3, 2e-3, 0.025) == 25
    # 100x slower: the count is capped so the slow block stays at ~4 targets (100 ms).
    assert calls_per_block(1e-4, 1e-2, 0.025) == 10
    assert calls_per_block(1.0, 2.0, 0.025) == 1


def test_keep_timing_until_the_budget_is_spent_within_bounds():
    budget = TimingBudget(budget_s=2.5, target_block_s=0.025, warmup_s=0.5, min_pairs=5, max_pairs=500)
    assert keep_timing(4, 100.0, budget)  # below min_pairs: always one more
    assert keep_timing(5, 2.4, budget)
    assert not keep_timing(5, 2.5, budget)
    assert not keep_timing(500, 0.1, budget)


class ScriptedClock:
    """Each block takes calls x (1 ms eager, 0.5 ms compiled); remembers the order of blocks."""

    def __init__(self, slow_blocks: int = 0):
        self.blocks = []
        self.slow_blocks = slow_blocks  # the first blocks take 50 ms more: a busy machine

    def time_block(self, call, calls):
        name = call()
        self.blocks.append((name, calls))
        spike = 50.0 if len(self.blocks) <= self.slow_blocks else 0.0
        return calls * (1.0 if name == "eager" else 0.5) + spike


def test_measure_interleaved_alternates_blocks_and_reports_per_call_times():
    clock = ScriptedClock()
    budget = TimingBudget(budget_s=0.0, target_block_s=0.01, warmup_s=0.0, min_pairs=6, max_pairs=100)
    samples = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget, clock=clock)
    assert samples.calls_per_block == 20  # 10 ms target / 0.5 ms per compiled call
    timed = clock.blocks[-12:]
    assert timed == [("eager", 20), ("compiled", 20)] * 6
    assert samples.eager_ms == [1.0] * 6 and samples.compiled_ms == [0.5] * 6


def test_blocks_are_resized_when_the_warm_up_was_slowed_down():
    clock = ScriptedClock(slow_blocks=6)  # the 3 + 3 warm-up calls look 100x slower than they are
    budget = TimingBudget(budget_s=0.0, target_block_s=0.01, warmup_s=0.0, min_pairs=2, max_pairs=100)
    samples = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget, clock=clock)
    assert samples.calls_per_block == 20
    assert samples.compiled_ms == [0.5, 0.5]


def test_a_failing_call_names_its_side():
    def broken():
        raise RuntimeError("boom")

    budget = TimingBudget(budget_s=0.0, target_block_s=0.001, warmup_s=0.0)
    with pytest.raises(TimedCallFailed) as failure:
        measure_interleaved(lambda: None, broken, device="cpu", budget=budget)
    assert failure.value.side == "compiled" and str(failure.value.cause) == "boom"


def test_repro_command_names_the_one_case():
    spec = CaseSpec(workload="mlp_loop", compile_mode="max-autotune", shape_regime="unbacked", dtype="bfloat16", device="cuda", size="full")
    assert repro_command(spec) == (
        "python -m runner run --size full --workloads mlp_loop --modes max-autotune --regimes unbacked --dtypes bfloat16 --device cuda"
    )
    eager = CaseSpec(workload="a.b:C", compile_mode="default", shape_regime="static", dtype="float32", device="cpu", backend="eager")
    assert repro_command(eager, timeout_s=1800).endswith("--backend eager --timeout 1800")
    # within the runner's default: no --timeout, so one case reads the same on every page (#42 item 8)
    assert repro_command(eager, timeout_s=600).endswith("--backend eager")
    assert current_repro("python -m runner run --suite tiny --workloads x --timeout 600 --python p") == (
        "python -m runner run --size tiny --workloads x --python p")


def test_plan_skips_unsupported_dtypes_and_dynamic_regimes_without_dynamic_dims():
    class NoDynamicDims(Passes):
        name = "no_dims"
        dynamic_dims = ()

    plan = plan_cases(
        [("x:TinyMLP", TinyMLP()), ("y:NoDynamicDims", NoDynamicDims())],
        modes=["default"],
        regimes=["static", "backed"],
        dtypes=["bfloat16"],
        device="cpu",
        backend="eager",
        size="tiny",
    )
    assert [(c.workload_name, c.spec.shape_regime, c.spec.dtype) for c in plan.cases] == [
        ("test_tiny_mlp", "static", "bfloat16"),
        ("test_tiny_mlp", "backed", "bfloat16"),
    ]
    assert any("no_dims: dtype bfloat16 not supported" in line for line in plan.skipped)
    default_dtype = plan_cases([("x", TinyMLP())], modes=["default"], regimes=["static"], dtypes=None, device="cpu", backend="eager", size="tiny")
    assert default_dtype.cases[0].spec.dtype == "float32"


def test_case_spec_round_trips_and_rejects_unknown_values():
    spec = CaseSpec(workload="w", compile_mode="default", shape_regime="backed", dtype="float32", device="cpu", timing=TimingBudget(1.0, 0.01, 0.1))
    assert CaseSpec.from_json(spec.to_json()) == spec
    with pytest.raises(ValueError, match="shape regime"):
        CaseSpec(workload="w", compile_mode="default", shape_regime="wobbly", dtype="float32", device="cpu")


def test_classify_exit():
    done = {"phase_reached": "done", "status": "fail_accuracy", "error": {"type": "AccuracyMismatch", "message": "m"}}
    assert classify_exit(ChildExit(0, False, 1.0, ""), done, 10)[0] == "fail_accuracy"
    status, error = classify_exit(ChildExit(-9, True, 10.0, "stack"), {"phase_reached": "compile"}, 10)
    assert status == "timeout" and "10 s" in error["message"] and "compile" in error["message"] and error["traceback"] == "stack"
    status, error = classify_exit(ChildExit(-signal.SIGSEGV, False, 1.0, "Fatal Python error"), {"phase_reached": "eager"}, 10)
    assert status == "crash" and error["type"] == "SIGSEGV" and "Fatal Python error" in error["traceback"]
    status, error = classify_exit(ChildExit(3, False, 1.0, ""), None, 10)
    assert status == "crash" and "code 3" in error["message"]
    assert signal_name(-signal.SIGKILL) == "SIGKILL"


def test_a_crash_inside_a_compile_path_names_the_path_phases_it_finished(tmp_path):
    # AOTInductor on the GPU hosts (bench/results/compile-paths-gpu-2026-11-27): the package compiled,
    # its load crashed; the record the case wrote as each phase ended says how far it got.
    from runner.engine.paths import Stopwatch, phase_listener
    from runner.engine.result_file import CaseRecord, ResultFile

    out, record = ResultFile(tmp_path / "result.json"), CaseRecord()
    out.write(record, "eager")

    def ended(phase: str, seconds: float) -> None:
        record.path_phases[phase] = seconds
        out.write_progress(record)

    watch = Stopwatch("cpu")
    with phase_listener(ended):
        for phase in ("export_s", "package_s"):
            with watch.phase(phase):
                pass
        with pytest.raises(RuntimeError), watch.phase("load_s"):
            raise RuntimeError("a phase that fails is not one that finished")
    with watch.phase("load_s"):  # no listener any more
        pass
    written = out.read()
    assert list(written["path_phases"]) == ["export_s", "package_s"] and written["phase_reached"] == "eager"
    assert list(written["environment"]["phase_end_s"]) == ["eager"]  # progress stamps no phase (the cost steps)
    status, error = classify_exit(ChildExit(-signal.SIGSEGV, False, 1.0, "Fatal Python error"), written, 10)
    assert status == "crash"
    assert error["message"] == "killed by SIGSEGV (last finished phase: eager, then the compile path's export_s, package_s)"


@pytest.mark.parametrize(
    "gpu_name, expected",
    [
        (None, "cpu"),
        ("NVIDIA H100 80GB HBM3", "gpu-h100"),
        ("NVIDIA H200", "gpu-h200"),
        ("NVIDIA A100-SXM4-40GB", "gpu-a100"),
        ("NVIDIA GeForce RTX 4090", "gpu-rtx4090"),
        ("Tesla V100-SXM2-16GB", "gpu-v100"),
        ("AMD Instinct MI300X", "gpu-mi300x"),
    ],
)
def test_machine_class_for(gpu_name, expected):
    assert machine_class_for(gpu_name) == expected


def test_progress_lines_and_eta():
    import io

    now = [0.0]
    stream = io.StringIO()
    progress = Progress(3, stream=stream, live=False, clock=lambda: now[0])
    progress.start_case(1, "a default/static")
    now[0] = 10.0
    progress.finish_case("pass")
    assert stream.getvalue() == "[1/3] a default/static: pass in 10.0s  elapsed 0:10  eta 0:20\n"
    assert estimate_remaining([], 3, 0) is None
    assert estimate_remaining([10.0, 20.0], 4, 5.0) == 25.0
    assert format_duration(3725) == "1:02:05"


def test_finite_json_drops_non_finite_numbers():
    assert finite_json({"a": float("nan"), "b": [1.0, float("inf")], "c": 2}) == {"a": None, "b": [1.0, None], "c": 2}


def test_speedup_is_the_median_of_paired_block_ratios():
    from runner.engine.stats import speedup_ratio

    # The host slows down for the last pairs: both blocks of a pair slow together, so the paired
    # ratios stay at 2.0 while the ratio of the two medians would not.
    eager = [2.0, 2.0, 2.0, 6.0, 6.0]
    compiled = [1.0, 1.0, 3.0, 3.0, 3.0]
    assert speedup_ratio(eager, compiled) == 2.0
    assert statistics_ratio_of_medians(eager, compiled) != 2.0
    assert bootstrap_speedup(eager, compiled).speedup == 2.0


def statistics_ratio_of_medians(eager, compiled):
    import statistics

    return statistics.median(eager) / statistics.median(compiled)


class JitteryClock:
    """Compiled blocks alternate between 0.4 and 0.6 ms per call (a launch-bound, noisy case)."""

    def __init__(self, jitter: float):
        self.jitter = jitter
        self.count = 0

    def time_block(self, call, calls):
        name = call()
        self.count += 1
        wobble = self.jitter if (self.count // 2) % 2 else -self.jitter
        return calls * (1.0 if name == "eager" else 0.5 + wobble)


def test_timing_goes_on_past_the_budget_only_while_the_interval_is_too_wide():
    budget = TimingBudget(budget_s=0.0, target_block_s=0.001, warmup_s=0.0, min_pairs=6, max_pairs=200,
                          noise_target=0.01, max_budget_s=5.0)
    quiet = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget, clock=JitteryClock(0.0))
    assert not quiet.extended and len(quiet.eager_ms) == 6
    noisy = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget, clock=JitteryClock(0.1))
    assert noisy.extended and len(noisy.eager_ms) > 6
    capped = dataclasses.replace(budget, max_budget_s=None)
    assert not measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=capped,
                                   clock=JitteryClock(0.1)).extended



class EnqueueClock(ScriptedClock):
    """A CUDA-like clock: the host took 0.9 of a compiled block and 0.4 of an eager one to enqueue."""

    def time_block(self, call, calls):
        elapsed = super().time_block(call, calls)
        self.last_enqueue_ms = elapsed * (0.9 if self.blocks[-1][0] == "compiled" else 0.4)
        return elapsed


class CountingProbe:
    def __init__(self):
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return 1.0 + self.calls / 100


def test_gpu_timing_records_the_host_probe_per_pair_and_each_sides_host_share():
    probe = CountingProbe()
    budget = TimingBudget(budget_s=0.0, target_block_s=0.01, warmup_s=0.0, min_pairs=6, max_pairs=100,
                          host_probe=True)
    samples = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget,
                                  clock=EnqueueClock(), probe=probe)
    assert samples.host_probe_ms == [1.01, 1.02, 1.03, 1.04, 1.05, 1.06]  # one per timed pair, none in warm-up
    assert samples.as_document_samples()["host_probe_ms"] == samples.host_probe_ms
    assert samples.host_share == {"eager": 0.4, "compiled": 0.9}
    plain = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu",
                                budget=dataclasses.replace(budget, host_probe=False), clock=ScriptedClock())
    assert plain.host_probe_ms == [] and plain.host_share == {} and "host_probe_ms" not in plain.as_document_samples()


def test_the_default_probe_times_python_work_on_the_host():
    budget = TimingBudget(budget_s=0.0, target_block_s=0.01, warmup_s=0.0, min_pairs=2, host_probe=True)
    samples = measure_interleaved(lambda: "eager", lambda: "compiled", device="cpu", budget=budget, clock=ScriptedClock())
    assert len(samples.host_probe_ms) == 2 and all(0 < ms < 1000 for ms in samples.host_probe_ms)


def test_gpu_cases_probe_the_host_and_cpu_cases_do_not():
    assert TimingBudget.for_device("cuda").host_probe and not TimingBudget.for_device("cpu").host_probe
