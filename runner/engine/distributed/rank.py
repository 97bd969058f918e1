"""One rank of a distributed case (``python -m runner.engine.distributed.rank``), started by the case.

Every rank runs the same phases (each step runs collectives, so every rank makes the same calls);
rank 0 writes the case's record after each phase, as the single-process case does
(runner.engine.case), with what the ranks gathered: the slowest rank's compile time and blocks, the
worst rank's gradient error, each rank's memory. A rank that fails writes ``rank<N>.error.json``
(status, error, when) and exits 1; the case reads those (runner.engine.distributed.launch).

Cold: eager side (instance A wrapped, one step: the reference loss and full gradients), compiled
side (instance B wrapped and compiled in the case's order; the first step timed = compile time;
dynamo's counters), accuracy (B's gradients after one step against A's), timing, memory per rank,
recompiles (B's variant-1 inputs). Warm: instance B only, its first step timed with the cache the
cold phase filled.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
import time
from pathlib import Path

from runner.engine import lifetime
from runner.engine.failures import CaseFailure, error_excerpt, exception_chain, failing_as, status_for

COLLECTIVE_TIMEOUT_ENV = "PTBENCH_COLLECTIVE_TIMEOUT_S"
DEFAULT_COLLECTIVE_TIMEOUT_S = 300.0  # a collective waiting this long fails the case as a timeout
_TIMED_OUT = re.compile(r"timed? ?out|timeout", re.IGNORECASE)


def collective_timeout_s() -> float:
    return float(os.environ.get(COLLECTIVE_TIMEOUT_ENV) or DEFAULT_COLLECTIVE_TIMEOUT_S)


def is_collective_timeout(exc: BaseException) -> bool:
    """A collective that waited past the process group's timeout (gloo: "Timed out waiting ...")."""
    return any(_TIMED_OUT.search(str(link)) for link in exception_chain(exc))


class Rank:
    """The phases of one rank; ``record`` is written only by rank 0."""

    def __init__(self, spec, *, rank: int, world: int, result: Path):
        from runner.engine.memory import MemoryProbe
        from runner.engine.result_file import CaseRecord, ResultFile

        self.spec, self.rank, self.world = spec, rank, world
        self.record = CaseRecord()
        self.out = ResultFile(result) if rank == 0 else None
        self.probe = MemoryProbe(spec.device)

    def write(self, phase: str) -> None:
        if self.out is not None:
            self.out.write(self.record, phase)

    def gather(self, value):
        """Every rank's ``value``, in rank order (a collective)."""
        import torch.distributed as dist

        values = [None] * self.world
        dist.all_gather_object(values, value)
        return values

    # -- the sides ------------------------------------------------------------------------------

    def load(self):
        from workloads.registry import get_workload

        with failing_as("eager_error"):
            self.workload = get_workload(self.spec.workload, allow_import=self.spec.import_allowed)
            self.options = self.workload.distributed
        self.record.environment["distributed"] = {
            "world_size": self.world, "backend": "nccl" if self.spec.device == "cuda" else "gloo",
            "parallel": self.options.parallel, "order": self.options.order, "checkpoint": self.options.checkpoint,
        }

    def side(self, *, compiled: bool):
        """(step, model, instance) of one side; the compiled side is marked and compiled, not yet called."""
        import torch

        from runner.engine.instances import build_instance
        from runner.engine.distributed.wrap import prepare
        from runner.engine.prepare import compile_kwargs

        instance = build_instance(self.workload, self.spec)
        if instance.loss is None or not instance.modules:
            raise ValueError(f"{self.spec.workload} has no training loss: it cannot run as a distributed training step")
        compile_fn = (lambda module: torch.compile(module, **compile_kwargs(self.spec))) if compiled else None
        model = prepare(instance.modules[0], parallel=self.options.parallel, compile_first=self.options.compile_first,
                        checkpoint=self.options.checkpoint, device=self.spec.device, compile=compile_fn)
        return Step(model, instance, self.spec), model, instance

    def compiled_side(self, inputs: tuple):
        from runner.engine import compat
        from runner.engine.prepare import mark_dynamic_dims, marked_dims

        with failing_as("compile_error"):
            compat.reset_dynamo()
            before = self.probe.allocated()
            step, model, instance = self.side(compiled=True)
            mark_dynamic_dims(inputs, instance.input_names, marked_dims(self.workload, self.spec), self.spec.shape_regime)
            self.barrier()
            loss, seconds = step.first(inputs)
        return step, model, instance, loss, max(self.gather(seconds)), before

    def barrier(self) -> None:
        import torch.distributed as dist

        dist.barrier()

    # -- the phases -----------------------------------------------------------------------------

    def run_cold(self) -> None:
        from runner.engine.dynamo_stats import breaks_from_counters, cache_counters, read_compile_counters
        from runner.engine.distributed.wrap import full_gradients
        from runner.engine.prepare import clone_inputs

        self.load()
        with failing_as("eager_error"):
            before = self.probe.allocated()
            eager, eager_model, eager_instance = self.side(compiled=False)
            inputs = tuple(eager_instance.make_inputs(0))
            pristine = clone_inputs(inputs)
            eager_loss, _ = eager.first(inputs)
            reference = (eager_loss, full_gradients(eager_model))
        self.write("eager")

        compiled, model, instance, loss, compile_s, compiled_before = self.compiled_side(pristine)
        counts = read_compile_counters()
        breaks = breaks_from_counters(counts)
        per_rank_breaks = self.gather(counts.graph_break_count)
        metrics = self.record.metrics
        metrics.update(compile_time_cold_s=compile_s, graph_break_count=counts.graph_break_count, unique_graphs=counts.unique_graphs)
        self.record.graph_breaks = breaks
        from runner.engine.distributed.measure import breaks_per_collective

        self.record.environment["distributed"].update(graph_breaks_per_collective=breaks_per_collective(breaks),
                                                      graph_breaks_per_rank=per_rank_breaks)
        self.record.environment["compile_caches"] = cache_counters()
        self.write("compile")

        with failing_as("compile_error", "while gathering gradients: "):
            gradients = full_gradients(model)
        self.judge_accuracy((loss, gradients), reference, instance)
        self.write("accuracy")

        self.time_and_measure(eager, eager_model, inputs, compiled, model, pristine, before, compiled_before)
        self.recompiles(compiled, instance)

    def judge_accuracy(self, actual, expected, instance) -> None:
        from runner.engine.accuracy import compare_outputs, tolerances

        rtol, atol = tolerances(self.spec.dtype, instance.rtol, instance.atol)
        mine = compare_outputs(actual, expected, rtol=rtol, atol=atol)
        every = self.gather((mine.ok, mine.max_abs_error, mine.max_rel_error, mine.problem))
        worst = max(every, key=lambda item: (not item[0], item[1] or 0.0))
        metrics = self.record.metrics
        metrics["accuracy_max_abs_error"] = max((item[1] or 0.0) for item in every)
        metrics["accuracy_max_rel_error"] = max((item[2] or 0.0) for item in every)
        if not worst[0]:
            failing = [rank for rank, item in enumerate(every) if not item[0]]
            self.record.status = "fail_accuracy"
            self.record.error = {"type": "AccuracyMismatch", "message": (
                f"gradients after one compiled step differ from eager {self.options.parallel} on rank(s) "
                f"{', '.join(map(str, failing))}: {worst[3]}")}

    def time_and_measure(self, eager, eager_model, inputs, compiled, model, pristine, eager_before, compiled_before) -> None:
        import functools

        from runner.engine.distributed.measure import measure_pairs, plan_timing, resident_bytes
        from runner.engine.memory import footprint
        from runner.engine.stats import bootstrap_speedup, median

        eager_call = functools.partial(eager, *inputs)
        compiled_call = functools.partial(compiled, *pristine)
        with failing_as("compile_error", "while timing: "):
            plan = plan_timing(eager_call, compiled_call, device=self.spec.device, budget=self.spec.timing_budget)
            samples = measure_pairs(eager_call, compiled_call, device=self.spec.device, plan=plan)
        estimate = bootstrap_speedup(samples.eager_ms, samples.compiled_ms, seed=self.spec.seed)
        self.record.metrics.update(speedup=estimate.speedup, speedup_noise=estimate.noise,
                                   eager_latency_ms=median(samples.eager_ms), compiled_latency_ms=median(samples.compiled_ms))
        self.record.samples = samples.as_document_samples()
        self.record.environment["timing"] = {"warmup_calls": plan.warmup_calls, "blocks_per_side": plan.pairs,
                                             "calls_per_block": plan.calls_per_block, "slowest_rank_per_block": True}
        self.write("timing")

        with failing_as("compile_error", "while measuring memory: "):
            mine = {"eager": footprint(resident_bytes(self.probe, eager_model, eager_before), self.probe.transient_peak(eager_call)),
                    "compiled": footprint(resident_bytes(self.probe, model, compiled_before), self.probe.transient_peak(compiled_call))}
            every = self.gather(mine)
        self.record.environment["distributed"]["peak_memory_per_rank"] = every
        for side in ("eager", "compiled"):
            known = [item[side] for item in every if item[side] is not None]
            self.record.metrics[f"{side}_peak_memory_bytes"] = max(known) if known else None

    def recompiles(self, compiled, instance) -> None:
        from runner.engine.dynamo_stats import RecompileWatcher
        from runner.engine.prepare import mark_dynamic_dims, marked_dims

        with failing_as("compile_error", "while running the second shape (variant 1): "):
            second = tuple(instance.make_inputs(1))
            mark_dynamic_dims(second, instance.input_names, marked_dims(self.workload, self.spec), self.spec.shape_regime)
            with RecompileWatcher() as watcher:
                compiled(*second)
        self.record.metrics["recompile_count"] = watcher.count
        self.record.recompiles = watcher.reasons
        self.write("recompiles")

    def run_warm(self) -> None:
        from runner.engine.dynamo_stats import cache_counters

        self.load()
        with failing_as("eager_error"):
            inputs = tuple(self.workload.build(size=self.spec.size, device=self.spec.device,
                                               dtype=_dtype(self.spec), seed=self.spec.seed).make_inputs(0))
        *_, compile_s, _ = self.compiled_side(inputs)
        self.record.metrics["compile_time_warm_s"] = compile_s
        self.record.environment["compile_caches"] = cache_counters()
        self.write("compile")


def _dtype(spec):
    from runner.engine.prepare import build_dtype

    return build_dtype(spec.dtype)


class Step:
    """One training step through the wrapped model: gradients cleared, forward, the workload's loss,
    backward; returns the loss. Gradients are left on the parameters (the accuracy check reads them)."""

    def __init__(self, model, instance, spec):
        from runner.engine.prepare import runnable

        self.model, self.names, self.loss, self.spec = model, tuple(instance.input_names), instance.loss, spec
        self.call = runnable(self._step, spec)

    def _step(self, *tensors):
        from runner.engine.distributed.wrap import clear_gradients

        clear_gradients(self.model)
        kwargs = dict(zip(self.names, tensors))
        loss = self.loss(self.model(**kwargs), kwargs)
        loss.backward()
        return loss.detach()

    def __call__(self, *tensors):
        return self.call(*tensors)

    def first(self, inputs: tuple):
        """(host loss, seconds) of one synchronised step."""
        import torch

        from runner.engine import compat

        torch.manual_seed(self.spec.seed)
        compat.synchronize(self.spec.device)
        started = time.perf_counter()
        loss = self(*inputs)
        compat.synchronize(self.spec.device)
        return loss.float().cpu(), time.perf_counter() - started


def _init(spec, *, rank: int, world: int, store: Path) -> None:
    import torch
    import torch.distributed as dist

    if spec.device == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl" if spec.device == "cuda" else "gloo", init_method=f"file://{store}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=collective_timeout_s()))


def run(spec, *, rank: int, world: int, store: Path, result: Path, errors: Path) -> int:
    """Run this rank; 0, or 1 after writing its error file."""
    import torch.distributed as dist

    worker = Rank(spec, rank=rank, world=world, result=result)
    try:
        try:
            _init(spec, rank=rank, world=world, store=store)
        except Exception as exc:  # noqa: BLE001 (no process group: nothing of the case can run)
            raise CaseFailure("eager_error", exc, "while starting the process group: ") from exc
        (worker.run_warm if spec.phase == "warm" else worker.run_cold)()
    except Exception as exc:  # noqa: BLE001 (a failure outside a phase's own status is a crash)
        failure = exc if isinstance(exc, CaseFailure) else CaseFailure("crash", exc)
        status = "timeout" if is_collective_timeout(failure.cause) else status_for(failure.status, failure.cause)
        error = error_excerpt(failure.cause, f"rank {rank}: {failure.context}")
        (errors / f"rank{rank}.error.json").write_text(json.dumps({"status": status, "error": error, "at": time.time()}))
        return 1
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    lifetime.follow_parent(sentinel=False)  # the case's sentinel already kills its group
    parser = argparse.ArgumentParser(prog="python -m runner.engine.distributed.rank")
    for name in ("spec", "store", "result", "errors"):
        parser.add_argument(f"--{name}", type=Path, required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    args = parser.parse_args(argv)
    from contract.spec import CaseSpec

    spec = CaseSpec.read(args.spec)
    if spec.config_overrides:  # a build variant: before anything is compiled
        from runner.engine.overrides import apply_config

        apply_config(spec.config_overrides)
    return run(spec, rank=args.rank, world=args.world, store=args.store, result=args.result, errors=args.errors)


if __name__ == "__main__":
    code = main()
    # Everything is written (the record and error files by atomic replace): skip the interpreter's
    # teardown of torch, seconds a rank on a loaded host, which the case would wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
