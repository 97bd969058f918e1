"""/dynamic/ per suite: the unbacked gap per family (``hf``, ``timm``, ...; ``core`` for the curated
workloads: ``contract.suites``) and the errors that keep a model's gap from being measured, with
those that are data-dependent (an unbacked symbol the compiler could not reason about) marked
(docs/families.md, "On the dashboard")."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db.models.fields.json import KT

from contract.data_dependent import caused_at
from contract.suites import suite_names, suite_of
from dashboard.results.aggregates import geomean
from dashboard.results.models import Result, Run
from dashboard.results.selectors.common import config_fields, config_lookups
from dashboard.results.selectors.dynamic import DYNAMIC_REGIMES, Pair, pair_failure
from dashboard.results.selectors.suites import notes_distinct

# What a data-dependent failure says: Dynamo's guard on a data-dependent symbol, the inductor
# assertion that an unbacked symbol (u0, u1, ...) is defined where the graph uses it, a symbol an
# op needed as an int.
DATA_DEPENDENT = re.compile(
    r"GuardOnDataDependentSymNode|data-dependent|data dependent|unbacked"
    r"|OrderedSet\(\[u\d+[^\]]*\]\)|Cannot convert symbols to int|could not guard on",
    re.IGNORECASE,
)
DATA_DEPENDENT_STATUS = "data_dependent_error"  # the runner classified it (runner.engine.data_dependent)
FIRST_LINE = 200  # characters of an error's first line shown in the table
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")  # "AssertionError(...", "triton.CompilationError: ..."


@dataclass
class Blocker:
    """What failed on one side of a workload's pair."""

    regime: str
    status: str
    text: str  # the error's type and first line
    full: str  # the whole message, for the title
    data_dependent: bool


@dataclass
class FamilyGap:
    family: str
    workloads: int = 0
    measured: int = 0  # both regimes passed
    geomean_gap: float | None = None
    failed: int = 0
    data_dependent: int = 0
    gaps: list[float] = field(default_factory=list)
    backed_every_dim: int = 0  # models whose backed side is on every dim (``Pair.backed_every_dim``)


def headline(message: str) -> str:
    """An error's first line; where that line only announces what follows (``SubprocException: An
    exception occurred in a subprocess:``, a Triton kernel's compile error), the kernel's
    ``Name=`` line and the last exception line beneath it too, so the table names the cause."""
    lines = [line.strip() for line in (message or "").strip().splitlines() if line.strip()]
    if not lines or not lines[0].endswith(":"):
        return lines[0] if lines else ""
    names = [line.removeprefix("Name=") for line in lines[1:] if line.startswith("Name=")]
    causes = [line for line in lines[1:] if EXCEPTION_LINE.match(line)]
    return " ".join([lines[0], *names[:1], *causes[-1:]])


def is_data_dependent(text: str) -> bool:
    return bool(DATA_DEPENDENT.search(text or ""))


def _dynamic_cases(*, machine_class: str, mode: str, dtype: str, build_id: int, dims: tuple[str, ...] | None = None):
    return Result.objects.filter(build_id=build_id, series__machine_class=machine_class,
                                 **config_lookups(compile_mode=mode, dtype=dtype, shape_regime__in=DYNAMIC_REGIMES, dims=dims))


def dynamic_run_notes(*, machine_class: str, mode: str, dtype: str, build_id: int, dims: tuple[str, ...] | None = None) -> list[str]:
    """What the notes of the runs that measured the build's backed and unbacked cases say (the
    runner's "partial" sentence left out), distinct, e.g. that five cases shared one GPU."""
    run_ids = _dynamic_cases(machine_class=machine_class, mode=mode, dtype=dtype, build_id=build_id, dims=dims).values("run_id")
    return notes_distinct(Run.objects.filter(id__in=run_ids).order_by("started_at", "id").values_list("notes", flat=True))


def dynamic_blockers(*, machine_class: str, mode: str, dtype: str, build_id: int, dims: tuple[str, ...] | None = None) -> dict[str, Blocker]:
    """Per workload of the build whose backed or unbacked case did not pass, the failed side's error
    (the unbacked side first, as ``pair_failure`` names it; the case stored last of each series).
    With dims, a workload without a backed case of those dims has its backed case on every dim
    (the pair ``BACKED_EVERY_DIM`` stands against)."""
    sides: dict[str, dict[str, tuple]] = {}
    for workload, regime, *failure in _failure_rows(
            _dynamic_cases(machine_class=machine_class, mode=mode, dtype=dtype, build_id=build_id, dims=dims)):
        sides.setdefault(workload, {})[regime] = tuple(failure)
    alone = [w for w, by_regime in sides.items() if "backed" not in by_regime]
    if dims and alone:
        every_dim = Result.objects.filter(build_id=build_id, series__machine_class=machine_class, workload__name__in=alone,
                                          **config_lookups(compile_mode=mode, dtype=dtype, shape_regime="backed", dims=None))
        for workload, regime, *failure in _failure_rows(every_dim):
            sides[workload][regime] = tuple(failure)
    out = {}
    for workload, by_regime in sides.items():
        for regime in ("unbacked", "backed"):
            status, error_type, message, detail, cuda_graphs = by_regime.get(regime, ("pass", "", "", None, None))
            if status == "pass" and (skipped := _cuda_graphs_skipped(cuda_graphs)):
                out.setdefault(workload, Blocker(regime=regime, status=status, text=skipped[:FIRST_LINE],
                                                 full=skipped[:4000], data_dependent=False))
            if status != "pass":
                error_type, message = error_type or "", message or ""
                first = headline(message)
                text = _data_dependent_text(detail) or (f"{error_type.rsplit('.', 1)[-1]}: {first}" if error_type else first)
                out[workload] = Blocker(regime=regime, status=status, text=text[:FIRST_LINE], full=f"{error_type}: {message}"[:4000],
                                        data_dependent=status == DATA_DEPENDENT_STATUS or is_data_dependent(f"{error_type} {message}"))
                break
    return out


def _cuda_graphs_skipped(facts: dict | None) -> str:
    """``CUDA graphs skipped for 1 graph: mutated inputs (1 instances)``: a passing case of a CUDA-graph
    mode whose compiled graphs inductor ran without them (``environment.cuda_graphs``, recorded by
    the runner from inductor's own skip lines), or "" where every graph ran under CUDA graphs or
    nothing was recorded. Its speedup is then default mode's, whatever the mode says."""
    if not isinstance(facts, dict) or not facts.get("skipped_graphs"):
        return ""
    count = facts["skipped_graphs"]
    reasons = "; ".join(dict.fromkeys(_skip_reason(str(r)) for r in facts.get("reasons") or []))  # each once
    return f"CUDA graphs skipped for {count} graph{'s' if count != 1 else ''}" + (f": {reasons}" if reasons else "")


_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>[^\n]*)')


def _skip_reason(reason: str) -> str:
    """``mutated inputs (56 instances) at transformers/cache_utils.py:482 in update: self.keys.index_copy_(...)``:
    inductor's reason with the innermost frame of the stack it appends ("Found from :", outermost
    first), which is the line that did what stopped CUDA graphs; a reason without a stack as it is."""
    head, found, stack = reason.partition("Found from")
    frames = list(_FRAME.finditer(stack)) if found else []
    if not frames:
        return reason.strip()
    last = frames[-1]
    path = last["path"].split("site-packages/", 1)[-1]
    return f"{head.strip().rstrip('.')} at {path}:{last['line']} in {last['func']}: {last['code'].strip()}"


def _data_dependent_text(detail: dict | None) -> str:
    """``u0 > 1 at transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward``: the
    expression and the user's line the runner read from a data-dependent error
    (``environment.data_dependent``; the line from its ``caused_by`` where torch named it only
    there), or "" where it read no expression; the message's first line is then shown."""
    if not isinstance(detail, dict) or not detail.get("expression"):
        return ""
    where = detail.get("source") or ((at := caused_at(str(detail.get("caused_by") or ""))) and at[0])
    return f"{detail['expression']} at {where}" if where else str(detail["expression"])


def _failure_rows(cases):
    """(workload, regime, status, error type, error message, environment.data_dependent,
    environment.cuda_graphs) of ``cases``, in the order stored."""
    return (cases.order_by("id").annotate(error_type=KT("error__type"), error_message=KT("error__message"))
            .values_list("workload__name", *config_fields("shape_regime"), "status", "error_type", "error_message",
                         "environment__data_dependent", "environment__cuda_graphs"))


def family_gaps(pairs: list[Pair], blockers: dict[str, Blocker]) -> list[FamilyGap]:
    """One row per suite present: its workloads, the geomean gap over those where both regimes
    passed, how many failed and how many of those failures are data-dependent."""
    rows: dict[str, FamilyGap] = {}
    for pair in pairs:
        row = rows.setdefault(suite_of(pair.workload), FamilyGap(family=suite_of(pair.workload)))
        row.workloads += 1
        row.backed_every_dim += pair.backed_every_dim
        if pair.gap is not None:
            row.gaps.append(pair.gap)
        if pair_failure(pair.backed, pair.unbacked):
            row.failed += 1
            blocker = blockers.get(pair.workload)
            row.data_dependent += bool(blocker and blocker.data_dependent)
    for row in rows.values():
        row.measured, row.geomean_gap = len(row.gaps), geomean(row.gaps)
    return [rows[s] for s in suite_names() if s in rows]
