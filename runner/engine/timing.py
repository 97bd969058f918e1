"""Interleaved block timing of an eager and a compiled call.

A block is ``k`` back-to-back calls between one pair of timestamps: CUDA events (after a
synchronize, so the queue is empty when the block starts) on a GPU, ``time.perf_counter_ns`` on
the CPU. ``k`` is sized from the warm-up so that a block lasts about ``target_block_s``; blocks
alternate eager, compiled, eager, ... so that slow drifts of clocks and temperature hit both.
A sample is the per-call time of one block, in milliseconds.

Host diagnostics (GPU): the CUDA clock also records how long the host took to enqueue each block
(its share of the block's device time: near 1 means host-bound), and with
``TimingBudget.host_probe`` a fixed piece of pure-Python work is timed before each pair, so that a
result says how fast the host was while it was measured (on a shared machine that changes over
seconds, and a host-bound case follows it).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from contract.spec import TimingBudget
from runner.engine.stats import bootstrap_speedup, median

Call = Callable[[], object]
SIDES = ("eager", "compiled")


class HostClock:
    """Wall time on the host; right for CPU work, which is synchronous."""

    def time_block(self, call: Call, calls: int) -> float:
        start = time.perf_counter_ns()
        for _ in range(calls):
            call()
        return (time.perf_counter_ns() - start) / 1e6


class CudaEventClock:
    """Device time between two CUDA events around the block; the queue is drained before and after."""

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self.last_enqueue_ms = 0.0  # host time to enqueue the last block

    def time_block(self, call: Call, calls: int) -> float:
        self._torch.cuda.synchronize()
        started = time.perf_counter_ns()
        self._start.record()
        for _ in range(calls):
            call()
        self.last_enqueue_ms = (time.perf_counter_ns() - started) / 1e6
        self._end.record()
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


def host_probe_ms() -> float:
    """Milliseconds of a fixed piece of pure-Python work (~0.9 ms on the lent H100's host at full
    speed): the host's current speed for Python and dispatch-bound code like a compiled step's."""
    started = time.perf_counter()
    total = 0
    for i in range(20_000):
        total += i * i
    return (time.perf_counter() - started) * 1e3


def clock_for(device: str) -> HostClock | CudaEventClock:
    return CudaEventClock() if device == "cuda" else HostClock()


class TimedCallFailed(Exception):
    """A call raised while being timed; ``side`` says which ("eager" or "compiled")."""

    def __init__(self, side: str, cause: Exception):
        self.side = side
        self.cause = cause
        super().__init__(f"{side} call failed: {type(cause).__name__}: {cause}")


class Sides:
    """Times blocks of either side on one clock; a failure names the side that raised.

    The calls themselves are passed bare (no wrapper per call), so both sides pay the same, minimal
    Python overhead inside a block.
    """

    def __init__(self, eager: Call, compiled: Call, clock):
        self.calls = {"eager": eager, "compiled": compiled}
        self.clock = clock
        self.host_shares: dict[str, list[float]] = {side: [] for side in SIDES}  # enqueue / device time

    def block_ms(self, side: str, calls: int) -> float:
        try:
            elapsed = self.clock.time_block(self.calls[side], calls)
        except Exception as exc:
            raise TimedCallFailed(side, exc) from exc
        enqueue_ms = getattr(self.clock, "last_enqueue_ms", None)
        if enqueue_ms is not None and elapsed > 0:
            self.host_shares[side].append(enqueue_ms / elapsed)
        return elapsed


def calls_per_block(
    fast_call_s: float,
    slow_call_s: float,
    target_block_s: float,
    *,
    max_slow_block_factor: float = 4.0,
    max_calls: int = 100_000,
) -> int:
    """Calls per block so that the faster function's block lasts ``target_block_s``.

    One count serves both functions (their samples stay comparable); it is lowered so that the
    slower function's block stays under ``max_slow_block_factor`` targets.
    """
    if fast_call_s <= 0 or slow_call_s <= 0:
        raise ValueError("call times must be positive")
    calls = math.ceil(target_block_s / fast_call_s)
    calls = min(calls, math.floor(max_slow_block_factor * target_block_s / slow_call_s))
    return max(1, min(calls, max_calls))


def keep_timing(pairs: int, elapsed_s: float, budget: TimingBudget) -> bool:
    """Another (eager, compiled) pair? Until the budget is spent, within [min_pairs, max_pairs].

    The budget is wall time, not a count fixed in advance: a calibration thrown off by a busy
    machine then changes the block size, not how long the case takes.
    """
    if pairs < budget.min_pairs:
        return True
    return pairs < budget.max_pairs and elapsed_s < budget.budget_s


@dataclass(frozen=True)
class Calibration:
    """Per-call seconds of each side after warm-up."""

    eager_call_s: float
    compiled_call_s: float
    warmup_calls: int


def warm_up(sides: Sides, *, warmup_s: float, min_calls: int = 3) -> Calibration:
    """Call both alternately, each timed alone, until both ran ``min_calls`` times and ``warmup_s`` passed.

    The per-call estimate is the fastest call after the first: on a shared or throttled machine
    interference only ever adds time, and blocks sized from an inflated estimate would be too short.
    """
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    started = time.perf_counter()
    while len(times["eager"]) < min_calls or time.perf_counter() - started < warmup_s:
        for side in SIDES:
            times[side].append(sides.block_ms(side, 1) / 1e3)
    return Calibration(
        eager_call_s=max(min(times["eager"][1:]), 1e-9),
        compiled_call_s=max(min(times["compiled"][1:]), 1e-9),
        warmup_calls=len(times["eager"]),
    )


def size_blocks(sides: Sides, calibration: Calibration, target_block_s: float, *, rounds: int = 3) -> int:
    """Calls per block from the warm-up, then checked on whole blocks (which amortise launch and
    timer overheads that single calls do not) and grown while the faster block is under half the
    target. These sizing blocks are not samples."""
    per_call = {"eager": calibration.eager_call_s, "compiled": calibration.compiled_call_s}
    calls = calls_per_block(min(per_call.values()), max(per_call.values()), target_block_s)
    for _ in range(rounds):
        per_call = {side: sides.block_ms(side, calls) / 1e3 / calls for side in SIDES}
        if min(per_call.values()) * calls >= target_block_s / 2:
            break
        resized = calls_per_block(min(per_call.values()), max(per_call.values()), target_block_s)
        if resized <= calls:  # held back by the slower side's cap
            break
        calls = resized
    return calls


@dataclass(frozen=True)
class TimingSamples:
    eager_ms: list[float]
    compiled_ms: list[float]
    calls_per_block: int
    warmup_calls: int
    timed_s: float = 0.0  # wall time of the sampled blocks
    extended: bool = False  # timing went past ``budget_s`` because the interval was too wide
    host_probe_ms: list[float] = field(default_factory=list)  # one per pair, timed just before it
    host_share: dict[str, float] = field(default_factory=dict)  # per side, median enqueue / device time

    def as_document_samples(self) -> dict:
        samples = {"eager_ms": self.eager_ms, "compiled_ms": self.compiled_ms, "calls_per_block": self.calls_per_block}
        if self.host_probe_ms:
            samples["host_probe_ms"] = self.host_probe_ms
        return samples


def measure_interleaved(
    eager: Call, compiled: Call, *, device: str, budget: TimingBudget, clock=None, probe: Callable[[], float] | None = None
) -> TimingSamples:
    """Warm up, size the blocks, then time eager and compiled blocks alternately within the budget.

    With ``budget.host_probe``, ``probe`` (default :func:`host_probe_ms`) is timed before each pair.
    Raises :class:`TimedCallFailed` naming the side whose call raised.
    """
    sides = Sides(eager, compiled, clock or clock_for(device))
    probe = (probe or host_probe_ms) if budget.host_probe else None
    calibration = warm_up(sides, warmup_s=budget.warmup_s)
    calls = size_blocks(sides, calibration, budget.target_block_s)
    sides.host_shares = {side: [] for side in SIDES}  # of the sampled blocks only
    samples: dict[str, list[float]] = {side: [] for side in SIDES}
    probes: list[float] = []
    started = time.perf_counter()

    def one_pair() -> None:
        if probe is not None:
            probes.append(probe())
        for side in SIDES:
            samples[side].append(sides.block_ms(side, calls) / calls)

    while keep_timing(len(samples["eager"]), time.perf_counter() - started, budget):
        one_pair()
    extended = False
    while too_noisy(samples, budget, time.perf_counter() - started):
        extended = True
        for _ in range(EXTENSION_PAIRS):
            one_pair()
    host_share = {side: round(median(shares), 4) for side, shares in sides.host_shares.items() if shares}
    return TimingSamples(samples["eager"], samples["compiled"], calls, calibration.warmup_calls,
                         timed_s=time.perf_counter() - started, extended=extended, host_probe_ms=probes,
                         host_share=host_share)


EXTENSION_PAIRS = 10  # pairs timed between two checks of the interval


def too_noisy(samples: dict[str, list[float]], budget: TimingBudget, elapsed_s: float) -> bool:
    """Time more? Only with a ``max_budget_s`` left and pairs to spare, while the speedup's 95%
    interval (a quick bootstrap) is wider than +-``noise_target``."""
    pairs = len(samples["eager"])
    if budget.max_budget_s is None or elapsed_s >= budget.max_budget_s or pairs + EXTENSION_PAIRS > budget.max_pairs:
        return False
    if pairs < 2 or min(samples["compiled"]) <= 0:
        return False
    return bootstrap_speedup(samples["eager"], samples["compiled"], resamples=300).noise > budget.noise_target
