"""What a rank measures that the single-process case measures differently (docs/distributed.md).

- timing: every rank must make the same calls (each step runs collectives), so the schedule is
  fixed before timing starts: rank 0 sizes blocks and pairs from one call of each side and
  broadcasts them; each block's time is the slowest rank's (a step ends when its collectives do).
- graph breaks counted per collective: the reasons that name one (all_reduce, all_gather, ...).
- memory per rank: what the rank keeps of its side (its shard under FSDP) plus one step's transient.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch.distributed as dist

from runner.engine import compat
from runner.engine.memory import MemoryProbe, growth

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier", "wait_tensor")
_COLLECTIVE = re.compile(r"(all_?reduce|all_?gather|reduce_?scatter|broadcast|all_?to_?all|barrier|wait_tensor)", re.IGNORECASE)


def collective_of(reason: str) -> str:
    """The collective a graph-break reason names (``all_gather_into_tensor`` -> all_gather), or "other"."""
    found = _COLLECTIVE.search(reason)
    if not found:
        return "other"
    word = found.group(1).lower().replace("allreduce", "all_reduce").replace("allgather", "all_gather")
    return next((c for c in COLLECTIVES if c.replace("_", "") == word.replace("_", "")), word)


def breaks_per_collective(breaks: list[dict]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for entry in breaks:
        name = collective_of(entry["reason"])
        counted[name] = counted.get(name, 0) + int(entry["count"])
    return dict(sorted(counted.items()))


def slowest(values: list[float], device: str) -> list[float]:
    """Per position, the largest value over the ranks (a collective: every rank calls it)."""
    tensor = torch.tensor(values, dtype=torch.float64, device=_collective_device(device))
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return tensor.cpu().tolist()


def _collective_device(device: str) -> str:
    return f"cuda:{torch.cuda.current_device()}" if device == "cuda" else "cpu"


@dataclass(frozen=True)
class Plan:
    calls_per_block: int
    pairs: int
    warmup_calls: int


def plan_timing(eager: Callable[[], object], compiled: Callable[[], object], *, device: str, budget) -> Plan:
    """Rank 0's schedule for every rank: blocks of ``budget.target_block_s`` of the slower side,
    as many pairs as ``budget.budget_s`` holds (``min_pairs`` to ``max_pairs``)."""
    once = [_timed(call, 1, device) for call in (eager, compiled)]
    per_call = max(slowest(once, device))
    calls = max(1, round(budget.target_block_s / max(per_call, 1e-9)))
    pairs = int(min(max(budget.budget_s / max(2 * calls * per_call, 1e-9), budget.min_pairs), budget.max_pairs))
    warmup = max(1, round(budget.warmup_s / max(per_call, 1e-9)))
    shared = [Plan(calls, pairs, min(warmup, 20))]
    dist.broadcast_object_list(shared, src=0)
    return shared[0]


def _timed(call: Callable[[], object], calls: int, device: str) -> float:
    compat.synchronize(device)
    started = time.perf_counter()
    for _ in range(calls):
        call()
    compat.synchronize(device)
    return time.perf_counter() - started


@dataclass
class Samples:
    eager_ms: list[float]
    compiled_ms: list[float]
    plan: Plan

    def as_document_samples(self) -> dict:
        return {"eager_ms": self.eager_ms, "compiled_ms": self.compiled_ms}


def measure_pairs(eager: Callable[[], object], compiled: Callable[[], object], *, device: str, plan: Plan) -> Samples:
    """Warm-up, then ``plan.pairs`` interleaved blocks per side (eager first); ms per call, slowest rank."""
    for _ in range(plan.warmup_calls):
        eager()
        compiled()
    eager_s, compiled_s = [], []
    for _ in range(plan.pairs):
        eager_s.append(_timed(eager, plan.calls_per_block, device))
        compiled_s.append(_timed(compiled, plan.calls_per_block, device))
    both = slowest(eager_s + compiled_s, device)
    scale = 1000.0 / plan.calls_per_block
    return Samples([t * scale for t in both[:plan.pairs]], [t * scale for t in both[plan.pairs:]], plan)


def local_bytes(model: torch.nn.Module) -> int:
    """Bytes this rank holds of the model's parameters, buffers and gradients (its shards under FSDP)."""
    seen: set[int] = set()
    total = 0
    tensors = [*model.parameters(), *model.buffers()]
    tensors += [p.grad for p in model.parameters() if p.grad is not None]
    for tensor in tensors:
        local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
        storage = local.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total


def resident_bytes(probe: MemoryProbe, model: torch.nn.Module, before: int | None) -> int | None:
    """What a side keeps: on the CPU its local tensors, on CUDA the growth since ``before``."""
    if probe.host:
        return local_bytes(model)
    return growth(before, probe.allocated())
