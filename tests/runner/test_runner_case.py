"""Cases run in this process (eager backend): graph breaks, unique graphs, recompiles, accuracy."""
from __future__ import annotations

import dataclasses
import inspect

import pytest
import torch

from runner.engine import compat
from runner.engine.case import run_case
from runner.engine.dynamo_stats import second_call_recompiles
from runner.engine.result_file import ResultFile
from contract.spec import CaseSpec, TimingBudget
from tests.runner import sample_workloads

QUICK = TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3)


def run_in_process(tmp_path, workload: str, regime: str, dtype: str = "float32") -> dict:
    spec = CaseSpec(workload=workload, compile_mode="default", shape_regime=regime, dtype=dtype, device="cpu", backend="eager", timing=QUICK)
    out = ResultFile(tmp_path / f"{regime}.json")
    run_case(spec, out)
    return out.read()


def graph_break_lines() -> list[int]:
    lines, first = inspect.getsourcelines(sample_workloads.two_breaks)
    return [first + i for i, line in enumerate(lines) if "graph_break()" in line]


def test_two_graph_breaks_are_counted_with_their_locations_and_every_frame_recompiles(tmp_path):
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:TwoGraphBreaks", "static")
    assert record["status"] == "pass", record["error"]
    assert record["metrics"]["graph_break_count"] == 2
    assert record["metrics"]["unique_graphs"] == 3
    locations = sorted(entry["location"] for entry in record["graph_breaks"])
    assert locations == [f"tests/runner/sample_workloads.py:{line} in two_breaks" for line in graph_break_lines()]
    assert all("graph_break()" in entry["reason"] and entry["count"] == 1 for entry in record["graph_breaks"])
    # A second shape under static shapes recompiles every frame dynamo compiled: the function
    # and its two resume functions.
    assert record["metrics"]["recompile_count"] == 3
    assert sum(entry["count"] for entry in record["recompiles"]) == 3
    assert all("size mismatch at index 0. expected 8, actual 12" in entry["reason"] for entry in record["recompiles"])
    assert "second_shape" not in record["environment"]  # several frames: each recompiled in turn, for real


@pytest.mark.parametrize("regime, recompiles", [("static", 1), ("backed", 0), ("unbacked", 0)])
def test_one_graph_function_recompiles_only_when_static(tmp_path, regime, recompiles):
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:TinyMLP", regime)
    metrics = record["metrics"]
    assert record["status"] == "pass", record["error"]
    assert (metrics["graph_break_count"], metrics["unique_graphs"], metrics["recompile_count"]) == (0, 1, recompiles)
    assert record["graph_breaks"] == []
    if recompiles:
        [entry] = record["recompiles"]
        assert entry["count"] == 1 and "size mismatch at index 0. expected 16, actual 24" in entry["reason"]
        assert record["environment"]["second_shape"] == "recompile counted at its guard failure, not compiled (static, one graph)"
    else:
        assert record["recompiles"] == []
    samples = record["samples"]
    assert len(samples["eager_ms"]) == len(samples["compiled_ms"]) >= 3
    assert record["environment"]["compiled_instance"] == "built"  # no rebind: a second seeded build
    parts = record["environment"]["eager_parts_s"]  # the eager step's wall time, by part
    assert list(parts) == ["device", "workload", "build", "inputs", "first_call", "reference_to_host"]
    assert all(v >= 0 for v in parts.values()) and sum(parts.values()) <= record["environment"]["phase_end_s"]["eager"] + 0.01
    assert metrics["speedup"] > 0 and metrics["speedup_noise"] >= 0
    # CPU: the parameters plus the rise of the process's peak resident size during one call.
    assert metrics["eager_peak_memory_bytes"] > 0 and metrics["compiled_peak_memory_bytes"] > 0


def test_a_training_step_compares_against_an_identically_seeded_eager_copy(tmp_path):
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:TrainStep", "backed")
    assert record["status"] == "pass", record["error"]
    assert record["metrics"]["accuracy_max_abs_error"] < 1e-4


def test_low_precision_differences_that_float64_explains_pass(tmp_path):
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:RoundingChain", "static", dtype="bfloat16")
    assert record["metrics"]["accuracy_max_abs_error"] > 1e-3  # beyond the workload's tolerance...
    fp64 = record["environment"]["accuracy_fp64"]
    assert fp64["passed"] and fp64["compiled_rmse"] < fp64["eager_rmse"]  # ...but closer to float64
    assert fp64["reference"] == "rebuilt in float64"  # no modules to copy: a third build
    assert record["status"] == "pass", record["error"]


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.sqrt(torch.mean((a.double() - b.double()) ** 2)))


def test_the_float64_reference_is_the_eager_model_upcast_not_a_third_build(tmp_path):
    """As the harness's ``cast_to_fp64(deepcopy(model))``: the eager side's bfloat16 weights in
    float64. The workload is built once: the compiled side and the float64 run copy the eager
    side's modules (``Instance.rebind``)."""
    workload = sample_workloads.ScaledRoundingChain
    workload.builds = 0
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:ScaledRoundingChain", "static", dtype="bfloat16")
    assert record["status"] == "pass", record["error"]
    assert record["metrics"]["accuracy_max_abs_error"] > 1e-3  # the float64 check did run
    fp64 = record["environment"]["accuracy_fp64"]
    assert fp64["reference"] == "eager weights in float64" and fp64["passed"]
    assert workload.builds == 1 and record["environment"]["compiled_instance"] == "copied from eager"
    # The eager output's distance to float64 is the distance to the upcast bfloat16 weights' chain,
    # not to a float64 build's own (unrounded) weights.
    built = workload().build(size="tiny", device="cpu", dtype=torch.bfloat16)
    (x,) = built.make_inputs(0)
    [eager] = built.fn(x)
    upcast = x.double() * built.modules[0].scale.double() ** 20
    unrounded = x.double() * workload().build(size="tiny", device="cpu", dtype=torch.float64).modules[0].scale ** 20
    assert fp64["eager_rmse"] == pytest.approx(_rmse(eager, upcast), rel=1e-6)
    assert _rmse(eager, unrounded) != pytest.approx(_rmse(eager, upcast), rel=1e-2)


def test_low_precision_outputs_that_are_wrong_still_fail(tmp_path):
    record = run_in_process(tmp_path, "tests.runner.fault_workloads:WrongWhenCompiled", "static", dtype="bfloat16")
    assert record["status"] == "fail_accuracy"
    assert record["environment"]["accuracy_fp64"]["passed"] is False


def test_data_dependent_branches_count_as_graph_breaks_with_their_lines(tmp_path):
    """torch >= 2.12 files data-dependent branching under counters["unimplemented"], not "graph_break"."""
    record = run_in_process(tmp_path, "tests.runner.sample_workloads:DataDependentBranch", "static")
    assert record["status"] == "pass", record["error"]
    assert record["metrics"]["graph_break_count"] == 2
    lines, first = inspect.getsourcelines(sample_workloads.branch_and_item)
    where = {name: first + i for i, line in enumerate(lines) for name in ("if y.sum()", ".item()") if name in line}
    by_location = {entry["location"]: entry["reason"] for entry in record["graph_breaks"]}
    assert "branching" in by_location[f"tests/runner/sample_workloads.py:{where['if y.sum()']} in branch_and_item"].lower()
    assert "item()" in by_location[f"tests/runner/sample_workloads.py:{where['.item()']} in branch_and_item"]



def test_a_probed_case_records_the_host_probe_with_its_samples(tmp_path):
    spec = CaseSpec(workload="tests.runner.sample_workloads:TinyMLP", compile_mode="default", shape_regime="static",
                    dtype="float32", device="cpu", backend="eager", timing=dataclasses.replace(QUICK, host_probe=True))
    out = ResultFile(tmp_path / "probed.json")
    run_case(spec, out)
    record = out.read()
    assert record["status"] == "pass", record["error"]
    samples, timing = record["samples"], record["environment"]["timing"]
    assert len(samples["host_probe_ms"]) == len(samples["eager_ms"]) == len(samples["compiled_ms"])
    assert timing["host_probe_ms"]["min"] == pytest.approx(min(samples["host_probe_ms"]), abs=1e-4)
    assert timing["host_probe_ms"]["min"] <= timing["host_probe_ms"]["median"]
    assert "host_share" not in timing  # the host clock has no separate enqueue time
    # The compile too: how fast the host ran meanwhile (a sidecar's probes) and the CPU it took.
    compile_host = record["environment"]["compile"]
    assert compile_host["probe_samples"] >= 1 and compile_host["host_probe_ms"]["median"] > 0
    assert 0 < compile_host["cpu_s"] and 0 < compile_host["wall_s"]


def test_unbacked_on_the_batch_dim_only_marks_that_dim_and_the_sequence_stays_static(tmp_path):
    """--dims batch (the harness's --unbacked-batch-only): of the two declared dims only x:0 is
    marked; the second shape changes both, so the static sequence dim recompiles once, the batch not."""
    spec = CaseSpec(workload="tests.runner.sample_workloads:BatchAndSequence", compile_mode="default", shape_regime="unbacked",
                    dtype="float32", device="cpu", backend="eager", timing=QUICK, dims=("batch",))
    out = ResultFile(tmp_path / "batch.json")
    run_case(spec, out)
    record = out.read()
    assert record["status"] == "pass", record["error"]
    assert record["environment"]["marked_dims"] == ["x:0"]
    [entry] = record["recompiles"]
    assert "size mismatch at index 1. expected 10, actual 12" in entry["reason"], entry


def test_amp_runs_a_training_step_under_autocast_and_passes_the_harness_tolerance(tmp_path):
    spec = CaseSpec(workload="tests.runner.sample_workloads:TrainStep", compile_mode="default", shape_regime="static",
                    dtype="amp", device="cpu", backend="inductor", timing=QUICK)
    out = ResultFile(tmp_path / "amp.json")
    run_case(spec, out)
    record = out.read()
    assert record["status"] == "pass", record["error"]
    assert record["metrics"]["accuracy_max_abs_error"] is not None and "marked_dims" not in record["environment"]


def test_amp_runs_the_step_under_bfloat16_autocast_on_the_case_device():
    import torch

    from runner.engine.prepare import runnable

    spec = CaseSpec(workload="transformer_train_step", compile_mode="default", shape_regime="static", dtype="amp", device="cpu")
    seen = runnable(lambda: (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")), spec)()
    assert seen == (True, torch.bfloat16)


def test_a_one_frame_recompile_is_counted_as_compiling_would_count_it_without_compiling():
    """second_call_recompiles(stop_before_compiling=True): the guard failure is recorded, the compile
    is not run; the count and reason equal those of the real recompile that follows."""
    compiles = []

    def counting_backend(graph, example_inputs):
        compiles.append([tuple(t.shape) for t in example_inputs])
        return graph.forward

    compat.reset_dynamo()
    fn = torch.compile(lambda x: (x * 2).sum(0), backend=counting_backend, dynamic=False)
    fn(torch.ones(8, 4))
    stopped, was_stopped = second_call_recompiles(lambda: fn(torch.ones(12, 4)), stop_before_compiling=True)
    assert was_stopped and len(compiles) == 1
    real, real_stopped = second_call_recompiles(lambda: fn(torch.ones(12, 4)), stop_before_compiling=False)
    assert not real_stopped and len(compiles) == 2
    assert stopped.count == real.count == 1 and stopped.reasons == real.reasons
    assert "size mismatch at index 0. expected 8, actual 12" in real.reasons[0]["reason"]
    # Guards that pass: the compiled code runs, nothing is stopped or counted.
    same, same_stopped = second_call_recompiles(lambda: fn(torch.ones(8, 4)), stop_before_compiling=True)
    assert not same_stopped and same.count == 0 and len(compiles) == 2


def test_a_wrapped_recompile_error_still_counts_as_stopped_and_other_errors_are_raised():
    """A torch build that wraps RecompileError in its own error (the GPU hosts run 2.11) is still
    stopped, not a compile error; an unrelated error from the call is the call's."""
    error = compat.recompile_stopper()[1]

    def wrapped():
        try:
            raise error("Recompiling function f")
        except error as inner:
            raise RuntimeError("dynamo wrapped it") from inner

    assert second_call_recompiles(wrapped, stop_before_compiling=True)[1] is True

    def unrelated():
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        second_call_recompiles(unrelated, stop_before_compiling=True)
