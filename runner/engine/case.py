"""The code that runs inside a case subprocess (``python -m runner case --spec F --result R``).

Cold phase, in order (the result file is rewritten after each step that adds numbers):
1. eager: build instance A, make the variant-0 inputs (and a pristine copy for B), call A once:
   the reference output (copied to the host).
2. compile: reset dynamo, build instance B with the same seed (or deep-copy A's modules where
   the instance's ``rebind`` allows: the families), mark the dynamic dims of B's inputs
   per regime, ``torch.compile``, time the first call (synchronised) = cold compile time; read
   dynamo's counters (graph breaks, unique graphs).
3. accuracy: B's first output against A's.
4. timing: warm-up, then interleaved blocks (``timing``), speedup and its bootstrap noise (``stats``).
5. memory: resident + transient peak of one call, per side (``memory``; CUDA-graph pools counted).
6. recompiles: B's variant-1 inputs, marked the same way, through the compiled function (static
   with one graph: stopped at the recompile once its reason is recorded, not compiled again).
6b. profile: one profiled call of each side (``kernel_profile``, docs/explain.md); the compile's
   phases (``compile_records``) and generated kernels were read around and after step 2.
7. graph-break locations: ``torch._dynamo.explain`` on A, only when the compile broke the graph.

On CUDA, steps 4-5 and 6b (and a float64 accuracy run) hold the GPU's exclusive lock
(``gpu_lock``), so that other cases' processes on the same GPU compile meanwhile but never time;
autotuning's benchmarks hold it too (each burst, or the whole first compiled call on a torch without
inductor's benchmark-lock hook), so that no case times while another autotunes.

Warm phase: the same build, eager call and compile as the cold phase, in a new process whose
inductor/triton cache directory the cold phase filled; only the first compiled call is timed.
"""
from __future__ import annotations

import contextlib
import functools
import os
import time
from typing import Any, Callable

import torch

from runner.engine import compat, cuda_graph_skips, kernel_profile
from runner.engine.accuracy import LOW_PRECISION, to_host
from runner.engine.accuracy_check import check_accuracy
from runner.engine.dynamo_stats import (
    breaks_from_counters,
    cache_counters,
    explain_graph_breaks,
    locate_breaks,
    read_compile_counters,
    second_call_recompiles,
)
from contract.phases import with_first_run
from runner.engine.compile_records import CompileRecorder
from runner.engine.cost import Laps
from runner.engine.failures import CaseFailure, classify, failing_as
from runner.engine.gpu_lock import DeviceLock
from runner.engine.host_speed import HostSpeedSampler
from runner.engine.instances import build_instance, second_instance
from runner.engine.memory import MemoryProbe, device_bytes, footprint
from runner.engine.paths import deploy, phase_listener
from runner.engine.prepare import clone_inputs, mark_dynamic_dims, marked_dims, runnable, unbacked_hint, uses_cuda_graphs
from runner.engine.result_file import CaseRecord, ResultFile
from contract.spec import CaseSpec
from runner.engine.stats import bootstrap_speedup, median
from workloads.base import Instance
from runner.engine.timing import TimedCallFailed, measure_interleaved


# A call that raises while being timed fails the case as its side's first call would have.
SIDE_FAILURE_STATUS = {"eager": "eager_error", "compiled": "compile_error"}


def timed_first_call(fn: Callable[..., Any], inputs: tuple, spec: CaseSpec) -> tuple[Any, float]:
    """(host copy of the output, seconds) of one synchronised call."""
    torch.manual_seed(spec.seed)
    compat.synchronize(spec.device)
    started = time.perf_counter()
    output = fn(*inputs)
    compat.synchronize(spec.device)
    elapsed = time.perf_counter() - started
    return to_host(output), elapsed


class EagerSide:
    """Instance A, its inputs, and a pristine copy of them for the compiled side."""

    def __init__(self, workload, spec: CaseSpec, probe: MemoryProbe, laps: Laps | None = None):
        laps = laps or Laps()
        before = probe.allocated()
        self.instance = build_instance(workload, spec)
        laps.mark("build")
        self.inputs = tuple(self.instance.make_inputs(0))
        self.pristine_inputs = clone_inputs(self.inputs)
        # Host copy for a float64 re-check of a failing low-precision comparison.
        self.host_inputs = to_host(self.inputs) if spec.dtype in LOW_PRECISION else None
        self.fn = runnable(self.instance.fn, spec)
        laps.mark("inputs")
        self.reference, call_s = timed_first_call(self.fn, self.inputs, spec)
        laps.mark("first_call")
        laps.seconds["reference_to_host"] = round(laps.seconds["first_call"] - call_s, 3)
        laps.seconds["first_call"] = round(call_s, 3)
        self.resident_bytes = probe.resident(self.instance, before, -device_bytes(self.pristine_inputs))


class CompiledSide:
    """Instance B compiled on the pristine inputs, marked per regime; the first call timed.
    ``before_first_call`` runs once everything but the compile is done (instance built, inputs
    marked): a compile pair's side waits there for its go line and starts its CPU count.
    ``copy_of``: the eager instance, whose modules B deep-copies where its ``rebind`` allows (the
    same weights as a second seeded build, without building: ``instances.second_instance``;
    ``made`` says which)."""

    def __init__(self, workload, spec: CaseSpec, inputs: tuple, probe: MemoryProbe,
                 before_first_call: Callable[[], None] | None = None, copy_of: Instance | None = None,
                 first_call_hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
                 lock_waits: Callable[[], contextlib.AbstractContextManager] = lambda: contextlib.nullcontext([0.0])):
        compat.reset_dynamo()
        before = probe.allocated()
        self.instance, self.made = second_instance(workload, spec, copy_of)
        self.inputs = inputs
        mark_dynamic_dims(inputs, self.instance.input_names, marked_dims(workload, spec), spec.shape_regime)
        # torch.compile, or a compile path's export / package / load (runner.engine.paths)
        self.deployed = deploy(spec, self.instance, inputs, marked_dims(workload, spec))
        self.fn = self.deployed.fn
        if before_first_call is not None:
            before_first_call()
        # On a GPU host, how fast the host ran during the compile (runner.engine.host_speed).
        sampler = HostSpeedSampler() if spec.timing_budget.host_probe else contextlib.nullcontext()
        with first_call_hold(), sampler, CompileRecorder() as recorder:  # the hold: autotuning on an older torch
            with lock_waits() as waited:
                self.first_output, first_call_s = timed_first_call(self.fn, inputs, spec)
        # a compile's own time: not the seconds its autotuning waited for another case's timing to end
        self.lock_wait_s = waited[0]
        first_call_s -= self.lock_wait_s
        self.compile_time_s = self.deployed.finish(first_call_s)
        # the compile by phase (runner.engine.compile_records), adding up to the first call's wall time
        self.compile_record = with_first_run(recorder.record, first_call_s)
        self.host_speed = getattr(sampler, "result", None)
        self._allocated_before_build = before

    def resident_bytes(self, probe: MemoryProbe) -> int | None:
        """Growth since before the build; call after warm-up, once CUDA-graph pools are recorded."""
        return probe.resident(self.instance, self._allocated_before_build, device_bytes(self.inputs))


def _case_environment(spec: CaseSpec, workload, instance) -> dict:
    environment = {"backend": spec.backend, "size": spec.size, "implementation": instance.implementation}
    if spec.device == "cuda":
        environment["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    if spec.workload != workload.name:
        environment["workload_spec"] = spec.workload
    if spec.dims is not None:  # the dims the configuration names, and the declared dims they marked
        environment["marked_dims"] = [str(d) for d in marked_dims(workload, spec)]
    hint = unbacked_hint(marked_dims(workload, spec), spec.shape_regime)
    if hint:
        environment["unbacked_hint"] = hint
    if spec.backend != "inductor" and spec.compile_mode != "default":
        environment["compile_mode_ignored"] = f"mode {spec.compile_mode!r} only applies to inductor"
    return environment


def run_cold(spec: CaseSpec, record: CaseRecord, out: ResultFile) -> None:
    # On a GPU: one case at a time times or autotunes (runner.engine.gpu_lock)
    lock = DeviceLock.for_device(spec.device)
    with lock.autotuning():
        _run_cold(spec, record, out, lock)


def _run_cold(spec: CaseSpec, record: CaseRecord, out: ResultFile, lock: DeviceLock) -> None:
    from workloads.registry import get_workload

    laps = Laps()  # the eager step's parts (environment.eager_parts_s, docs/families.md "Cost")
    probe = MemoryProbe(spec.device)
    probe.allocated()  # on a GPU: the CUDA context starts here
    laps.mark("device")
    with failing_as("eager_error"):
        workload = get_workload(spec.workload, allow_import=spec.import_allowed)
        laps.mark("workload")
        eager = EagerSide(workload, spec, probe, laps)
    record.environment.update(_case_environment(spec, workload, eager.instance))
    record.environment["eager_parts_s"] = laps.seconds
    out.write(record, "eager")

    with cuda_graph_skips.watching(record.environment, wanted=uses_cuda_graphs(spec)):
        _compile_and_time(spec, workload, eager, record, out, lock, probe)


def _compile_and_time(spec: CaseSpec, workload, eager: "EagerSide", record: CaseRecord, out: ResultFile,
                      lock: DeviceLock, probe: MemoryProbe) -> None:
    """The compiled side, from its compile to its profile, beside the eager side already made."""
    code_mark = kernel_profile.code_mark()
    def path_phase_ended(phase: str, seconds: float) -> None:  # a compile path's export, package, load
        record.path_phases[phase] = round(seconds, 6)
        out.write_progress(record)

    with failing_as("compile_error"), phase_listener(path_phase_ended):
        compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe, copy_of=eager.instance,
                                first_call_hold=lock.first_call_hold, lock_waits=lock.waits)
    record.environment.update(lock.environment())
    if lock.path is not None:
        record.environment["compile_lock_wait_s"] = round(compiled.lock_wait_s, 3)
    started = time.perf_counter()
    kernels = kernel_profile.generated_kernels(code_mark)
    fingerprint_s = time.perf_counter() - started
    record.compile_phases["cold"] = compiled.compile_record
    counts = read_compile_counters()
    record.metrics["compile_time_cold_s"] = compiled.compile_time_s
    record.environment["compiled_instance"] = compiled.made
    if compiled.host_speed is not None:
        record.environment["compile"] = compiled.host_speed.as_environment()
    record.metrics["graph_break_count"] = counts.graph_break_count
    record.metrics["unique_graphs"] = counts.unique_graphs
    record.graph_breaks = breaks_from_counters(counts)
    record.environment["compile_caches"] = cache_counters()
    _record_path(compiled, record)
    out.write(record, "compile")

    with lock.hold("accuracy"):
        check_accuracy(spec, workload, eager, compiled, record)
    record.environment.update(lock.environment())
    out.write(record, "accuracy")

    with lock.hold("timing+memory"):
        record.environment.update(lock.environment())
        eager_call, compiled_call = _time_and_measure(spec, eager, compiled, probe, record, out)
    record.environment.update(lock.environment())

    if compiled.deployed.fixed_shapes:  # a static export or package takes only the shapes it was made for
        record.environment["second_shape"] = f"not run: a static {spec.compile_mode} accepts only its example shapes"
        out.write(record, "recompiles")
    else:
        _second_shape(spec, workload, compiled, counts, record, out)

    if spec.timing_budget.profile:  # one profiled call per side, after timing (docs/explain.md)
        with lock.hold("profile"):
            _profile(spec, record, eager_call, compiled_call, kernels, fingerprint_s)
        record.environment.update(lock.environment())
        out.write(record, "profile")

    if counts.graph_break_count != 0:
        _locate_graph_breaks(spec, workload, eager, record)


def _time_and_measure(spec: CaseSpec, eager: EagerSide, compiled: CompiledSide, probe: MemoryProbe,
                      record: CaseRecord, out: ResultFile) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Timing (warm-up, interleaved blocks, the speedup) then each side's memory; the two calls."""
    eager_call = functools.partial(eager.fn, *eager.inputs)
    compiled_call = functools.partial(compiled.fn, *compiled.inputs)
    try:
        samples = measure_interleaved(eager_call, compiled_call, device=spec.device, budget=spec.timing_budget)
    except TimedCallFailed as failed:
        raise CaseFailure(SIDE_FAILURE_STATUS[failed.side], failed.cause, "while timing: ") from failed.cause
    estimate = bootstrap_speedup(samples.eager_ms, samples.compiled_ms, seed=spec.seed)
    record.metrics.update(
        speedup=estimate.speedup,
        speedup_noise=estimate.noise,
        eager_latency_ms=median(samples.eager_ms),
        compiled_latency_ms=median(samples.compiled_ms),
    )
    record.samples = samples.as_document_samples()
    record.environment["timing"] = _timing_environment(samples)
    out.write(record, "timing")

    compiled_resident = compiled.resident_bytes(probe)
    with failing_as("eager_error", "while measuring memory: "):
        record.metrics["eager_peak_memory_bytes"] = footprint(eager.resident_bytes, probe.transient_peak(eager_call))
    with failing_as("compile_error", "while measuring memory: "):
        record.metrics["compiled_peak_memory_bytes"] = footprint(compiled_resident, probe.transient_peak(compiled_call))
    out.write(record, "memory")
    return eager_call, compiled_call


def _record_path(compiled: CompiledSide, record: CaseRecord) -> None:
    """A compile path's phases and findings (runner.engine.paths): ``path_phases``, ``environment.compile_path``."""
    if compiled.deployed.phases:
        record.path_phases = dict(compiled.deployed.phases)
    if compiled.deployed.facts:
        record.environment["compile_path"] = compiled.deployed.facts


def _second_shape(spec: CaseSpec, workload, compiled: CompiledSide, counts, record: CaseRecord, out: ResultFile) -> None:
    # Static with one graph: the recompile is counted at its guard failure, not compiled
    # (runner.engine.dynamo_stats.second_call_recompiles).
    one_frame = spec.shape_regime == "static" and counts.graph_break_count == 0 and counts.unique_graphs == 1
    with failing_as("compile_error", "while running the second shape (variant 1): "):
        second_inputs = tuple(compiled.instance.make_inputs(1))
        mark_dynamic_dims(second_inputs, compiled.instance.input_names, marked_dims(workload, spec), spec.shape_regime)

        def call() -> None:
            compiled.fn(*second_inputs)
            compat.synchronize(spec.device)

        watcher, stopped = second_call_recompiles(call, stop_before_compiling=one_frame)
    record.metrics["recompile_count"] = watcher.count
    record.recompiles = watcher.reasons
    if stopped:
        record.environment["second_shape"] = "recompile counted at its guard failure, not compiled (static, one graph)"
    out.write(record, "recompiles")


def _profile(spec: CaseSpec, record: CaseRecord, eager_call, compiled_call, kernels: list[dict], fingerprint_s: float) -> None:
    try:
        record.kernel_profile = kernel_profile.kernel_profile(
            eager_call=eager_call, compiled_call=compiled_call, device=spec.device,
            synchronize=functools.partial(compat.synchronize, spec.device), kernels=kernels, fingerprint_s=fingerprint_s)
    except Exception as exc:  # noqa: BLE001 (the measurements stand; only the profile is missing)
        record.environment["profile_error"] = f"{type(exc).__name__}: {exc}"[:1000]


def _timing_environment(samples) -> dict:
    """How the timing went; on a GPU also how fast the host was and how host-bound each side is
    (``host_share``: enqueue time over device time per block; near 1 the device waited for Python)."""
    timing = {"warmup_calls": samples.warmup_calls, "blocks_per_side": len(samples.eager_ms),
              "timed_s": round(samples.timed_s, 3), "extended": samples.extended}
    if samples.host_probe_ms:
        timing["host_probe_ms"] = {"min": round(min(samples.host_probe_ms), 4), "median": round(median(samples.host_probe_ms), 4)}
    if samples.host_share:
        timing["host_share"] = samples.host_share
    return timing


def _locate_graph_breaks(spec: CaseSpec, workload, eager: EagerSide, record: CaseRecord) -> None:
    """Replace the counters' location-less reasons with explain's (reason, location) groups."""
    inputs = clone_inputs(eager.inputs)
    try:
        mark_dynamic_dims(inputs, eager.instance.input_names, marked_dims(workload, spec), spec.shape_regime)
        explained = explain_graph_breaks(eager.fn, inputs)
    except Exception as exc:  # noqa: BLE001 (the counts stand; only the locations are missing)
        record.environment["explain_error"] = f"{type(exc).__name__}: {exc}"[:1000]
        return
    if record.graph_breaks:
        record.graph_breaks = locate_breaks(record.graph_breaks, explained.entries)
    else:  # the counters were unavailable: explain's view is all there is
        record.graph_breaks = explained.entries
    if record.metrics["graph_break_count"] is None:
        record.metrics["graph_break_count"] = sum(entry["count"] for entry in explained.entries)
    if record.metrics["unique_graphs"] is None:
        record.metrics["unique_graphs"] = explained.graph_count


def run_warm(spec: CaseSpec, record: CaseRecord, out: ResultFile) -> None:
    from workloads.registry import get_workload

    probe = MemoryProbe(spec.device)
    with failing_as("eager_error"):
        workload = get_workload(spec.workload, allow_import=spec.import_allowed)
        eager = EagerSide(workload, spec, probe)  # same process state as the cold phase at compile time
    record.environment.update(_case_environment(spec, workload, eager.instance))
    lock = DeviceLock.for_device(spec.device)  # a cache miss that autotunes still keeps out of others' timing
    with failing_as("compile_error"), lock.autotuning():
        compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe, copy_of=eager.instance,
                                first_call_hold=lock.first_call_hold, lock_waits=lock.waits)
    record.environment.update(lock.environment())
    if lock.path is not None:
        record.environment["compile_warm_lock_wait_s"] = round(compiled.lock_wait_s, 3)
    record.metrics["compile_time_warm_s"] = compiled.compile_time_s
    _record_path(compiled, record)
    record.compile_phases["warm"] = compiled.compile_record
    if compiled.host_speed is not None:
        record.environment["compile_warm"] = compiled.host_speed.as_environment()
    record.environment["compile_caches"] = cache_counters()


def run_case(spec: CaseSpec, out: ResultFile, environment: dict | None = None) -> CaseRecord:
    """``environment``: what the case process knows of itself before the case (how it was started)."""
    record = CaseRecord()
    record.environment.update(environment or {})
    out.write(record, "start")
    try:
        from runner.engine.distributed import launch  # a case whose name asks for DDP / FSDP: docs/distributed.md

        with failing_as("eager_error"):
            distributed = launch.options(spec) is not None
        if distributed:
            launch.run(spec, record, out)
        elif spec.phase == "warm":
            run_warm(spec, record, out)
        else:
            run_cold(spec, record, out)
    except CaseFailure as failure:
        record.status, record.error, detail = classify(failure)
        if detail is not None:
            record.environment["data_dependent"] = detail
    out.write(record, "done")
    return record
