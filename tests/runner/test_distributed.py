"""Distributed training-step cases on the CPU: gloo, world size 2, real rank processes (docs/distributed.md).

One inductor case (a family name, DDP, wrapped then compiled); the rest compile with the eager
backend (dynamo still traces, wraps and breaks; no inductor codegen), to keep CI's cost low.
"""
from __future__ import annotations

import os
import signal
import sys

import pytest

from contract.spec import CaseSpec, TimingBudget
from runner.engine.distributed.launch import death, wait_ranks
from runner.engine.distributed.measure import breaks_per_collective, collective_of
from runner.engine.distributed.wrap import blocks_of, plain_name
from runner.engine.executor import CaseExecutor
from tests.fixtures.workers import wait_for
from tests.runner.case_processes import case_processes, left_after, start_runner
from workloads import names
from workloads.registry import UnknownWorkload, get_workload

DIST = "tests.runner.distributed_workloads"
QUICK = TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3)


def run_case(workload: str, *, backend: str = "eager", regime: str = "static", warm: bool = False) -> dict:
    spec = CaseSpec(workload=workload, compile_mode="default", shape_regime=regime, dtype="float32", device="cpu",
                    backend=backend, timing=QUICK, import_allowed=True)
    return CaseExecutor(python=sys.executable, timeout_s=300, warm=warm).run(spec, workload_name=workload, repro="")


# -- names, wrapping, reasons (no process group) ---------------------------------------------


def test_the_distributed_options_of_the_name_grammar():
    families = {"dist", "hf"}
    parsed = names.parse("dist:gpt@checkpoint+fsdp+train+compile_first", families=families)
    assert (parsed.train, parsed.parallel, parsed.compile_first, parsed.checkpoint) == (True, "fsdp", True, True)
    assert str(parsed) == "dist:gpt@train+fsdp+compile_first+checkpoint"  # one canonical name per case
    assert str(names.parse("hf:BertForMaskedLM@train+batch+ddp", families=families)) == "hf:BertForMaskedLM@train+batch+ddp"
    for bad, why in (("dist:gpt@train+ddp+fsdp", "not both"), ("dist:gpt@ddp", "add train"),
                     ("dist:gpt@train+checkpoint", "add ddp or fsdp"), ("dist:gpt@train+compile_first", "add ddp or fsdp")):
        with pytest.raises(names.BadName, match=why):
            names.parse(bad, families=families)


def test_a_distributed_family_name_gives_a_workload_with_its_options_and_a_loss():
    workload = get_workload("dist:mlp@train+fsdp+compile_first+checkpoint")
    assert (workload.distributed.parallel, workload.distributed.order, workload.distributed.checkpoint) == ("fsdp", "compile-then-wrap", True)
    assert get_workload("dist:gpt@train").distributed is None
    instance = get_workload("dist:gpt@train+ddp").build(size="tiny", device="cpu", dtype=__import__("torch").float32)
    assert len(blocks_of(instance.modules[0])) == 2  # the GPT's two layers: what FSDP shards and checkpointing wraps
    tokens, targets = instance.make_inputs(0)
    assert instance.loss(instance.modules[0](tokens=tokens, targets=targets), {"targets": targets}).ndim == 0
    with pytest.raises(UnknownWorkload, match="add train"):
        get_workload("dist:gpt@ddp")


def test_the_blocks_are_a_module_lists_children_else_the_wrapped_models_children():
    import torch.nn as nn

    class Wrapper(nn.Module):  # as the vision families wrap a classifier (workloads/families/_vision.py)
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Sequential(nn.Conv2d(4, 4, 3)), nn.Linear(4, 2))

    assert [type(b).__name__ for b in blocks_of(Wrapper())] == ["Conv2d", "Sequential", "Linear"]  # ReLU holds nothing


def test_gradient_names_read_alike_under_every_wrapper():
    assert plain_name("module._orig_mod.blocks.0._checkpoint_wrapped_module.weight") == "blocks.0.weight"
    assert plain_name("_orig_mod.head.bias") == "head.bias" == plain_name("head.bias")


def test_graph_breaks_are_counted_per_collective():
    breaks = [{"reason": "call_function all_gather_into_tensor", "count": 3},
              {"reason": "torch.distributed.all_reduce is not traceable", "count": 2},
              {"reason": "reduce_scatter_tensor", "count": 1}, {"reason": "generator", "count": 4}]
    assert breaks_per_collective(breaks) == {"all_gather": 3, "all_reduce": 2, "other": 4, "reduce_scatter": 1}
    assert collective_of("funcol.wait_tensor") == "wait_tensor"


def test_once_a_rank_fails_the_others_are_killed_after_the_grace(tmp_path):
    import subprocess

    failing = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    hanging = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    ended = wait_ranks([failing, hanging], grace_s=0.5)
    assert ended[0] is not None and ended[1] is None  # rank 1 was killed here
    assert hanging.wait(timeout=10) == -signal.SIGKILL


def test_a_rank_that_died_without_an_error_is_a_crash_unless_nccls_watchdog_timed_it_out():
    status, error = death(1, -signal.SIGSEGV, "Fatal Python error: Segmentation fault\n")
    assert (status, error["message"]) == ("crash", "rank 1 killed by SIGSEGV without an error")
    assert "Segmentation fault" in error["traceback"]
    watchdog = ("[rank0]:[E1125 13:50:00.000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=4000) ran for 4001 milliseconds before timing out.\n")
    status, error = death(0, -signal.SIGABRT, watchdog)
    assert status == "timeout" and error["message"].startswith("rank 0: a collective ran past the process group's timeout")


# -- whole cases: two gloo ranks each --------------------------------------------------------


@pytest.mark.slow
def test_a_ddp_case_compiled_with_inductor_measures_like_any_case():
    # Backed: each rank compiles once with inductor (static compiled the second shape again: a
    # quarter of the test's time). Recompiles counted on a static case: test_gradients_that_differ_...
    result = run_case("dist:mlp@train+ddp", backend="inductor", regime="backed")
    assert result["status"] == "pass", result["error"]
    metrics = result["metrics"]
    # the batch dim backed on every rank: the second shape (another batch) compiles nothing new
    assert metrics["speedup"] > 0 and metrics["compile_time_cold_s"] > 0 and metrics["recompile_count"] == 0
    assert metrics["accuracy_max_abs_error"] < 1e-4  # gradients after one step, compiled against eager DDP
    distributed = result["environment"]["distributed"]
    assert (distributed["world_size"], distributed["backend"], distributed["order"]) == (2, "gloo", "wrap-then-compile")
    assert len(distributed["peak_memory_per_rank"]) == 2 and metrics["eager_peak_memory_bytes"] > 0
    # torch.compile(DDP(model)) breaks where DDP's forward leaves dynamo; every break counted once per reason.
    assert metrics["graph_break_count"] == sum(distributed["graph_breaks_per_collective"].values()) > 0
    assert distributed["rank_exits"] == ["exited with code 0"] * 2
    assert len(result["samples"]["eager_ms"]) == len(result["samples"]["compiled_ms"]) >= 3


@pytest.mark.slow
def test_fsdp2_compiled_then_wrapped_with_checkpointing_passes_and_compiles_warm_on_every_rank():
    result = run_case(f"{DIST}:FsdpCompileFirstCheckpoint", warm=True)
    assert result["status"] == "pass", result["error"]
    assert "warm_compile_error" not in result["environment"] and result["metrics"]["compile_time_warm_s"] > 0
    distributed = result["environment"]["distributed"]
    assert (distributed["parallel"], distributed["order"], distributed["checkpoint"]) == ("fsdp", "compile-then-wrap", True)
    assert result["metrics"]["accuracy_max_abs_error"] < 1e-5


@pytest.mark.slow
def test_a_world_of_one_rank_fails_the_case_saying_why(monkeypatch):
    monkeypatch.setenv("PTBENCH_WORLD_SIZE", "1")
    result = run_case(f"{DIST}:Ddp")
    assert result["status"] == "eager_error"
    assert result["error"]["message"] == "a distributed case needs 2 or more ranks; this host gives 1 (PTBENCH_WORLD_SIZE)"


@pytest.mark.slow
def test_gradients_that_differ_from_eager_after_one_step_are_fail_accuracy():
    result = run_case(f"{DIST}:WrongGradientsWhenCompiled")
    assert result["status"] == "fail_accuracy"
    assert "differ from eager ddp on rank(s) 0, 1" in result["error"]["message"]
    assert result["metrics"]["accuracy_max_abs_error"] > 1e-4
    assert result["metrics"]["speedup"] is not None  # the case still measured everything else
    assert result["metrics"]["recompile_count"] >= 1  # static: the second shape recompiles, and the count is kept


@pytest.mark.slow
def test_a_collective_that_never_completes_is_a_timeout(monkeypatch):
    monkeypatch.setenv("PTBENCH_COLLECTIVE_TIMEOUT_S", "4")
    monkeypatch.setenv("PTBENCH_RANK_GRACE_S", "2")  # rank 1 never fails on its own: killed after the grace
    result = run_case(f"{DIST}:RankOneNeverJoins")
    assert result["status"] == "timeout", result["error"]
    assert result["error"]["message"].startswith("rank 0: ")
    assert result["environment"]["distributed"]["rank_exits"] == ["exited with code 1", "killed after a peer failed"]


@pytest.mark.slow
def test_a_rank_that_dies_by_a_signal_is_the_cases_crash_with_its_output():
    result = run_case(f"{DIST}:RankOneSegfaults")
    assert result["status"] == "crash", result["error"]
    assert result["error"]["message"] == "rank 1 killed by SIGSEGV without an error"  # not rank 0's broken connection
    assert "Segmentation fault" in result["error"]["traceback"]  # the rank's own output (faulthandler's)


@pytest.mark.slow
def test_kill_9_of_the_case_takes_its_ranks_and_what_they_started_with_it(tmp_path):
    runner, mark = start_runner(f"{DIST}:RankOneNeverJoins", out=tmp_path / "run.json")
    try:
        def ranks_and_sleeper():
            found = case_processes(mark)
            ranks = [p for p in found if "distributed.rank" in p["command"]]
            return found if len(ranks) == 2 and any("time.sleep(3600)" in p["command"] for p in found) else []

        running = wait_for(ranks_and_sleeper, timeout=120, what="both ranks and rank 1's sleeper")
        case = next(p for p in running if " runner case " in f" {p['command']} ")
        os.kill(case["pid"], signal.SIGKILL)
        assert left_after(mark, 10) == []
    finally:
        runner.kill()
        runner.wait(timeout=30)
