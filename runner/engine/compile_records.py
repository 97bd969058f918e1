"""A compile's time by phase and what it made, from PyTorch's own records (issue #30; docs/explain.md).

``CompileRecorder`` wraps the first compiled call (the compile). On entry it snapshots, on exit it
takes what each record grew by:
- ``torch._dynamo.utils.calculate_time_spent()`` (outer phases: entire_frame_compile,
  backend_compile, inductor_compile, code_gen, async_compile.wait; cumulative seconds) and
  ``compilation_time_metrics`` (every ``dynamo_timed`` key -> list of seconds): the inclusive totals
  that ``contract.phases.derive_phases`` turns into exclusive phases;
- ``get_compilation_metrics()`` (one ``CompilationMetrics`` per frame compile): guards
  (``guard_count``), FX/AOTAutograd cache hits and misses;
- ``torch._inductor.metrics.generated_kernel_count`` and dynamo's ``unique_graphs`` counter.

Every one of these moved or appeared across torch versions: each is looked up (``compat.dynamo_attr``)
and a missing one leaves its part out, never fails the case; ``source`` names what was read.
"""
from __future__ import annotations

import time
from typing import Any

from contract.phases import derive_phases
from runner.engine import compat

_CACHE_FIELDS = {
    "cache_hits": ("inductor_fx_local_cache_hit_count", "inductor_fx_remote_cache_hit_count",
                   "aotautograd_local_cache_hit_count", "aotautograd_remote_cache_hit_count"),
    "cache_misses": ("inductor_fx_local_cache_miss_count", "inductor_fx_remote_cache_miss_count",
                     "aotautograd_local_cache_miss_count", "aotautograd_remote_cache_miss_count"),
}


def _time_spent() -> dict[str, float]:
    calculate = compat.dynamo_attr("calculate_time_spent")
    if calculate is None:
        return {}
    try:
        return {str(k): float(v) for k, v in calculate().items()}
    except Exception:  # noqa: BLE001 (a changed signature: the finer records still count)
        return {}


def _timed_lists() -> dict[str, list[float]]:
    metrics = compat.dynamo_attr("compilation_time_metrics")
    return {str(k): list(v) for k, v in metrics.items()} if isinstance(metrics, dict) else {}


def _compilation_metrics() -> list[Any]:
    getter = compat.dynamo_attr("get_compilation_metrics")
    try:
        return list(getter()) if getter is not None else []
    except Exception:  # noqa: BLE001
        return []


def _kernel_count() -> int | None:
    try:
        from torch._inductor import metrics
    except ImportError:
        return None
    count = getattr(metrics, "generated_kernel_count", None)
    return int(count) if isinstance(count, int) else None


class CompileRecorder:
    """``with CompileRecorder() as rec: first_call()``; then ``rec.record`` (a compile_phases side)."""

    def __enter__(self) -> "CompileRecorder":
        entered = time.perf_counter()
        self._spent = _time_spent()
        self._lists = {k: len(v) for k, v in _timed_lists().items()}
        self._metrics_seen = len(_compilation_metrics())
        self._kernels = _kernel_count()
        self._started_us = time.time() * 1e6
        self.record: dict | None = None
        self._overhead_s = time.perf_counter() - entered
        return self

    def __exit__(self, *exc_info) -> None:
        started = time.perf_counter()
        try:
            self.record = self._read()
            # its own time: reading the records (bench/explain_overhead.py)
            self.record["overhead_s"] = round(self._overhead_s + time.perf_counter() - started, 6)
        except Exception as exc:  # noqa: BLE001 (records are extra: a torch that changed them loses them)
            self.record = {"error": f"{type(exc).__name__}: {exc}"[:500]}

    def _read(self) -> dict:
        records: dict[str, float] = {}
        for key, values in _timed_lists().items():
            new = values[self._lists.get(key, 0):]
            if new:
                records[key] = sum(float(v) for v in new)
        sources = ["compilation_time_metrics"] if records else []
        spent = _time_spent()
        grown = {k: v - self._spent.get(k, 0.0) for k, v in spent.items() if v - self._spent.get(k, 0.0) > 0}
        if grown:
            records.update(grown)  # calculate_time_spent's outer phases take precedence
            sources.append("calculate_time_spent")
        total, phases = derive_phases(records)
        counts: dict[str, int] = {}
        frames = [m for m in _compilation_metrics()[self._metrics_seen:]
                  if (getattr(m, "start_time_us", None) or self._started_us) >= self._started_us - 1e6]
        if frames:
            sources.append("CompilationMetrics")
            counts["guards"] = sum(int(getattr(m, "guard_count", None) or 0) for m in frames)
            for name, fields in _CACHE_FIELDS.items():
                counts[name] = sum(int(getattr(m, f, None) or 0) for m in frames for f in fields)
        kernels = _kernel_count()
        if kernels is not None and self._kernels is not None:
            counts["kernels"] = kernels - self._kernels
        graphs = (compat.dynamo_counters() or {}).get("stats", {}).get("unique_graphs")
        if graphs is not None:
            counts["graphs"] = int(graphs)
        record: dict = {"phases": phases, "counts": counts, "source": "+".join(sources) or "none"}
        if total is not None:
            record["total_s"] = total
        return record
