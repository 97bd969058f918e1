"""Compare two builds on a machine class, case by case: only the cases present in both are
compared; the others are listed apart. Reads two builds' rows through ``pairs.case_pairs``
and judges them by ``contract.comparison`` (the A/B page's and the home page's engine too).

A timed change is judged against its series' noise band (``NoiseBands``: where two runs of one
unchanged build differ 95 % of the time, the A/B page's rule); the noise model lives in
``dashboard.regressions`` (``dashboard.regressions.compare`` passes it in). compile_cpu_ratio
measured against different compile references on the two sides is not compared
(``REFERENCE_CHANGED``, ``dashboard.results.compile_reference``)."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from contract import comparison
from contract.comparison import REFERENCE_CHANGED, TOO_NOISY, Judged
from contract.comparison import SAME as WITHIN_NOISE
from contract.findings import BLOCK_TIMED_METRICS
from dashboard.results.compile_reference import REFERENCED_METRICS, reference_changed
from dashboard.results.models import Build, Config
from dashboard.results.selectors.common import METRICS, METRICS_BY_NAME, config_label
from dashboard.results.selectors.pairs import ROW_FIELDS, case_pairs, own_sd, stated_sd
from detection import new_breaks

FILTERS = ("all", "regressed", "improved", "new_failures", "new_graph_breaks")
SORT_KEYS = ("workload", "config", "status") + tuple(m.name for m in METRICS)
NoiseBands = Callable[[int], dict[str, float]]  # series id -> per timed metric, its relative 95 % band


@dataclass
class Change:
    old: float | None
    new: float | None
    change: float | None  # relative
    tone: str = ""  # "better", "worse", WITHIN_NOISE (a timed change inside its noise), TOO_NOISY, REFERENCE_CHANGED or ""
    noise: float | None = None  # the relative band a timed change is judged against
    sd: float | None = None  # the case's run-to-run sd (``comparison.case_sd``): too noisy to track past the bound
    finding: int | None = None  # the id of the finding stored for it (``regressions.colour_reasons``)
    reason: str = ""  # why a coloured change is no finding (``contract.colour_reasons``)
    borrowed: bool = False  # its noise is the class's prior: no repeated runs of one build of its own


@dataclass
class CompareRow:
    series_id: int
    workload: str
    config: str
    base_status: str
    head_status: str
    base_result_id: int
    head_result_id: int
    changes: dict[str, Change]
    cfg: Config | None = None
    flags: set[str] = field(default_factory=set)  # "regressed", "improved", "new_failures", "new_graph_breaks" (new reasons)
    status_finding: int | None = None  # the finding stored for a status change (``regressions.colour_reasons``)
    status_reason: str = ""  # why a status change is no finding


@dataclass
class OneSided:
    workload: str
    config: str
    status: str
    result_id: int


@dataclass
class Comparison:
    base: Build
    head: Build
    machine_class: str
    metric: str
    threshold: float
    rows: list[CompareRow] = field(default_factory=list)
    only_base: list[OneSided] = field(default_factory=list)
    only_head: list[OneSided] = field(default_factory=list)
    summary: dict[str, Change] | None = None  # compare_summary of every row in this order, where stored (regressions.services.compare_cells)


def builds_compare(*, base: Build, head: Build, machine_class: str, noise_bands: NoiseBands, metric: str = "speedup",
                   threshold: float = 0.05) -> Comparison:
    """``metric`` and ``threshold`` decide "regressed" and "improved": the metric moved the wrong
    (right) way by more than ``threshold`` (relative) and by more than the series' noise band
    (``noise_bands``). A pass turning into a failure is a regression, the reverse an improvement."""
    configs = {c.id: c for c in Config.objects.all()}
    labels = {config_id: config_label(c) for config_id, c in configs.items()}  # once per configuration, not per case
    pairs = case_pairs(base_id=base.id, head_id=head.id, machine_class=machine_class, fields=(*ROW_FIELDS, "graph_breaks_text"))
    out = Comparison(base=base, head=head, machine_class=machine_class, metric=metric, threshold=threshold)
    chosen = METRICS_BY_NAME[metric]
    for series_id, o, n in pairs.both:
        row = CompareRow(
            series_id=series_id, workload=n["workload__name"], config=labels[n["config_id"]],
            base_status=o["status"], head_status=n["status"], base_result_id=o["id"], head_result_id=n["id"], changes={},
            cfg=configs[n["config_id"]],
        )
        row.changes = case_changes(o, n, bands=noise_bands(series_id), threshold=threshold)
        _flag(row, chosen, new_break_reasons=_new_break_reasons(o, n))
        out.rows.append(row)
    out.only_base = [OneSided(o["workload__name"], labels[o["config_id"]], o["status"], o["id"])
                     for o in pairs.only_base]
    out.only_head = [OneSided(n["workload__name"], labels[n["config_id"]], n["status"], n["id"])
                     for n in pairs.only_head]
    out.rows.sort(key=lambda r: (r.workload, r.config))
    out.only_base.sort(key=lambda r: (r.workload, r.config))
    out.only_head.sort(key=lambda r: (r.workload, r.config))
    return out


def _new_break_reasons(o: dict, n: dict) -> bool:
    """Whether the head has a graph-break reason the base lacks (``detection.new_breaks``), asked only
    where ``_flag`` reads it (both passed) and the two lists differ (equal lists add none): normalising
    every reason of 2,000 cases costs a cold /compare/ ~0.2 s. The lists are read as their stored
    text (``pairs.TEXT_FIELDS``) and decoded only where the texts differ (equal texts: equal lists)."""
    if o["status"] != "pass" or n["status"] != "pass" or o["graph_breaks_text"] == n["graph_breaks_text"]:
        return False
    old, new = (json.loads(text) if text is not None else None for text in (o["graph_breaks_text"], n["graph_breaks_text"]))
    if not new or old == new:
        return False
    return bool(new_breaks(old, new))


def case_changes(o: dict, n: dict, *, bands: dict[str, float], threshold: float) -> dict[str, Change]:
    """Every metric of one case (``o`` base, ``n`` head: ``pairs`` rows) judged by the one engine
    (``contract.comparison.judge_cell``, ``judge``'s rule): a timed change against its series' noise band and either
    side's own noise (``pairs.own_sd``: its builds' repeated runs, a block-timed metric's stated
    interval; too noisy to track past the bound); compile_cpu_ratio measured against two
    compile references is not compared (REFERENCE_CHANGED). /compare/ asks 1,920 times a request:
    no ``Judged`` per cell, the stated intervals read once per case."""
    changes = {}
    runs, stated, judge_cell = o["runs"] or n["runs"], stated_sd(o, n), comparison.judge_cell
    for m, name, noisy, block_timed in _JUDGED:
        old, new = o[name], n[name]
        if noisy:  # own_sd: without repeated runs, the stated intervals of a block-timed metric
            within = own_sd(o, n, name) if runs else (stated if block_timed else None)
            noise = bands.get(name)
            change, tone, sd = judge_cell(m, old, new, threshold, noise, within)
            changes[name] = Change(old, new, change, tone, noise, sd)
        else:  # a count's judging reads no sd; unchanged, it is uncoloured
            change, tone, _ = judge_cell(m, old, new, threshold, None, None)
            changes[name] = Change(old, new, change, "" if tone == WITHIN_NOISE else tone)
    for name in REFERENCED_METRICS:  # measured against two compile references: not comparable
        if name in changes and reference_changed(name, o.get("compile_reference"), n.get("compile_reference")) \
                and o[name] is not None and n[name] is not None:
            changes[name] = Change(o[name], n[name], None, REFERENCE_CHANGED, bands.get(name))
    return changes


_JUDGED = tuple((m, m.name, m.noisy, m.name in BLOCK_TIMED_METRICS) for m in METRICS)  # case_changes' loop


def _change(metric, judged: Judged) -> Change:
    """/compare/'s cell of a judged change (a pooled row): relative, an unchanged count uncoloured."""
    return Change(judged.old, judged.new, judged.change, "" if not metric.noisy and judged.tone == WITHIN_NOISE
                  else judged.tone, judged.noise)


def _flag(row: CompareRow, metric, *, new_break_reasons: bool) -> None:
    """Flags from the status change, else from the chosen metric's colour (``judge_change``);
    ``new_graph_breaks``: a graph-break reason that the base lacks, between two passing runs, as
    detection calls it new (``detection.new_breaks``: a "new graph-break reason" finding), whatever
    the count did (2 -> 1 with a new reason is one; 1 -> 2 of the same reason is not)."""
    was_pass, is_pass = row.base_status == "pass", row.head_status == "pass"
    if was_pass and not is_pass:
        row.flags |= {"new_failures", "regressed"}
    elif is_pass and not was_pass:
        row.flags.add("improved")
    elif was_pass and is_pass and row.changes[metric.name].tone in ("worse", "better"):
        row.flags.add("regressed" if row.changes[metric.name].tone == "worse" else "improved")
    if was_pass and is_pass and new_break_reasons:
        row.flags.add("new_graph_breaks")


def compare_rows_select(*, rows: list[CompareRow], only: str = "all", sort: str = "", descending: bool = False) -> list[CompareRow]:
    """The rows one filter keeps, sorted by a column (a metric sorts by its relative change,
    missing values last)."""
    kept = rows if only == "all" else [r for r in rows if only in r.flags]
    if not sort:
        return list(kept)
    if sort in ("workload", "config"):
        return sorted(kept, key=lambda r: (getattr(r, sort), r.workload, r.config), reverse=descending)
    if sort == "status":
        return sorted(kept, key=lambda r: (r.base_status == r.head_status, r.head_status, r.workload), reverse=descending)
    present = [r for r in kept if r.changes[sort].change is not None]
    missing = [r for r in kept if r.changes[sort].change is None]
    return sorted(present, key=lambda r: r.changes[sort].change, reverse=descending) + missing


def compare_measured_metrics(*, rows: list[CompareRow], keep: str) -> tuple[list, list]:
    """(the metrics either build measured in some row, the others): the page leaves out a column
    that is "– → –" on every row (e.g. peak memory on a CPU, the compile-reference ratio without
    one) and names it instead; ``keep`` (the metric the page judges by) is always a column."""
    measured = [m for m in METRICS if m.name == keep or any(
        r.changes[m.name].old is not None or r.changes[m.name].new is not None for r in rows)]
    return measured, [m for m in METRICS if m not in measured]


def compare_summary_cases(*, rows: list[CompareRow]) -> tuple[int, int]:
    """What the geomean row is over: the rows where both sides passed, and how many of them are
    too noisy to track in speedup (left out of its geomean, ``compare_summary``; each figure leaves
    out its own)."""
    both = [r for r in rows if r.base_status == "pass" and r.head_status == "pass"]
    return len(both), sum(1 for r in both if r.changes["speedup"].tone == TOO_NOISY)


def compare_summary_shown(*, comparison: Comparison, rows: list[CompareRow], only: str, sort: str,
                          threshold: float) -> dict[str, Change]:
    """``compare_summary`` of the rows a page shows: the comparison's stored one where they are all
    its rows in its order (the geomeans' sums in the same order: the same figures to the bit)."""
    if comparison.summary is not None and only == "all" and not sort:
        return comparison.summary
    return compare_summary(rows=rows, threshold=threshold)


def compare_summary(*, rows: list[CompareRow], threshold: float = 0.05) -> dict[str, Change]:
    """The geomean row: per metric, ``contract.comparison.pooled`` over the rows where both sides
    passed (the geomeans, totals for the counts, judged against the mean of the rows' noise bands;
    rows too noisy to track or whose compile references differ left out, all of them: the row
    says so)."""
    both = [r for r in rows if r.base_status == "pass" and r.head_status == "pass"]
    out = {}
    for m in METRICS:
        cases = [r.changes[m.name] for r in both]  # a Change has what pooled reads of a Judged (17,000 fewer objects)
        out[m.name] = _change(m, comparison.pooled(m, cases, threshold=threshold))
    return out
