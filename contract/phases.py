"""Where a compile's time goes, and where a case's wall time goes: the registries of their parts
(issue #30; docs/explain.md). The runner writes a result's ``compile_phases`` and ``cost`` with these
keys only; the run document refuses others; the pages, the "what changed" view and detection name
them from here.

A compile phase is exclusive (the phases of one compile add up to its total): each is an inclusive
``dynamo_timed`` total of PyTorch's own records (``torch._dynamo.utils.calculate_time_spent()`` and
``compilation_time_metrics``) less the inclusive totals nested inside it (``derive_phases``).

Pure Python: no Django, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Phase:
    name: str  # the key in a result's compile_phases[cold|warm].phases
    label: str  # as the pages name it
    plus: tuple[str, ...]  # inclusive record keys added (the first one found of each group '|')
    minus: tuple[str, ...] = ()  # inclusive record keys subtracted (nested inside ``plus``)


# PyTorch's record keys (torch._dynamo.utils): calculate_time_spent() names the outer ones
# (entire_frame_compile, backend_compile, inductor_compile, code_gen, async_compile.wait); the
# finer ones are dynamo_timed keys of compilation_time_metrics. "a|b": a, or b where a is absent
# (a key renamed between torch 2.11 and 2.13).
TOTAL_KEY = "entire_frame_compile|_compile.compile_inner"
KERNEL_KEY = "PyCodeCache.load_by_key_path|async_compile.wait"
PHASES: tuple[Phase, ...] = (
    Phase("dynamo", "Dynamo tracing", (TOTAL_KEY,), ("backend_compile", "build_guards")),
    Phase("guards", "guards", ("build_guards",)),
    # A cache hit has no inductor_compile: its output code's load sits directly in backend_compile.
    Phase("aot_autograd", "AOTAutograd", ("backend_compile",), ("inductor_compile|compile_fx_inner|" + KERNEL_KEY,)),
    Phase("lowering", "Inductor lowering", ("inductor_compile|compile_fx_inner",), ("code_gen|GraphLowering.compile_to_module",)),
    Phase("codegen", "code generation", ("code_gen|GraphLowering.compile_to_module",), (KERNEL_KEY,)),
    # Kernels compile in Inductor's workers (Triton) or threads (C++) while code generation goes on;
    # the main thread waits for the rest when it loads the output code (load_by_key_path holds
    # async_compile.wait). Per-kernel compile_file times overlap (threads) and are not a phase.
    Phase("kernel_compile", "kernel compile wait and load", (KERNEL_KEY,)),
    # The first compiled call's wall time outside every record above (``with_first_run``): the run
    # itself and what happens at the first launch, such as Triton's autotuning and coordinate descent
    # tuning (measured on an H100: +3.8 s with inductor.coordinate_descent_tuning, bench/results/explain/).
    Phase("first_run", "first run and launch-time tuning", ()),
)
PHASE_NAMES: tuple[str, ...] = tuple(p.name for p in PHASES)
BY_NAME: dict[str, Phase] = {p.name: p for p in PHASES}

# Counts a compile record carries beside its phases.
COUNTS: tuple[str, ...] = ("guards", "graphs", "kernels", "cache_hits", "cache_misses")
COMPILE_SIDES: tuple[str, ...] = ("cold", "warm")

# A case's wall time, split (``cost``): where the runner's minutes go. "profile" is the one profiled
# call of each side after timing (runner.engine.kernel_profile).
COST_STEPS: tuple[tuple[str, str], ...] = (
    ("build", "build and eager call"),
    ("compile", "compile (cold)"),
    ("accuracy", "accuracy"),
    ("eager_timing", "eager timing"),
    ("compiled_timing", "compiled timing"),
    ("memory", "memory"),
    ("recompiles", "second shape"),
    ("explain", "graph-break locations"),
    ("profile", "kernel profile"),
    ("compile_pairs", "compile pairs"),
    ("warm", "warm process"),
)
COST_NAMES: tuple[str, ...] = tuple(name for name, _ in COST_STEPS)


def _first(records: dict[str, float], keys: str) -> float | None:
    for key in keys.split("|"):
        if key in records:
            return records[key]
    return None


def derive_phases(records: dict[str, float]) -> tuple[float | None, dict[str, float]]:
    """(total seconds, {phase: exclusive seconds}) from inclusive record totals (key -> seconds).

    A phase none of whose ``plus`` keys was recorded is left out (this torch did not time it); a
    difference below zero (keys nested differently in some torch) counts as zero."""
    total = _first(records, TOTAL_KEY)
    phases: dict[str, float] = {}
    for phase in PHASES:
        found = [v for v in (_first(records, k) for k in phase.plus) if v is not None]
        if not found:
            continue
        less = sum(v for v in (_first(records, k) for k in phase.minus) if v is not None)
        phases[phase.name] = round(max(0.0, sum(found) - less), 6)
    return (round(total, 6) if total is not None else None), phases


def with_first_run(record: dict | None, first_call_s: float) -> dict | None:
    """The compile record of a first call that lasted ``first_call_s``, its phases made to add up to
    it: the part outside PyTorch's compile records becomes the ``first_run`` phase and ``total_s``
    the first call's wall time (``records_total_s`` keeps the records' own total). A record without
    a total (nothing compiled in the call, or this torch kept no records) is returned as it is."""
    if not record or record.get("total_s") is None or not isinstance(record.get("phases"), dict):
        return record
    records_total = float(record["total_s"])
    record["phases"]["first_run"] = round(max(0.0, first_call_s - records_total), 6)
    record["records_total_s"] = records_total
    record["total_s"] = round(max(first_call_s, records_total), 6)
    return record


def phase_problems(compile_phases: object) -> list[tuple[str, str]]:
    """(field below compile_phases, message) for each key no registry names."""
    problems: list[tuple[str, str]] = []
    if not isinstance(compile_phases, dict):
        return problems
    for side, record in compile_phases.items():
        if side not in COMPILE_SIDES or not isinstance(record, dict):
            continue
        for name in record.get("phases") or {}:
            if name not in BY_NAME:
                problems.append((f"{side}.phases.{name}", f"is not a compile phase; known: {', '.join(PHASE_NAMES)}"))
        for name in record.get("counts") or {}:
            if name not in COUNTS:
                problems.append((f"{side}.counts.{name}", f"is not a compile count; known: {', '.join(COUNTS)}"))
    return problems


def cost_problems(cost: object) -> list[tuple[str, str]]:
    if not isinstance(cost, dict):
        return []
    return [(name, f"is not a cost step; known: {', '.join(COST_NAMES)}") for name in cost if name not in COST_NAMES]
