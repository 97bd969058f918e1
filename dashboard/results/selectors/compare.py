"""Compare two builds on a machine class, case by case: only the cases present in both are
compared; the others are listed apart. Reads two builds' rows through ``result_build_series``."""
from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.results.aggregates import geomean, latest_per_series, relative_change
from dashboard.results.models import Build, Config, Result
from dashboard.results.selectors.common import METRICS, METRICS_BY_NAME, config_label

FILTERS = ("all", "regressed", "improved", "new_failures", "new_graph_breaks")
SORT_KEYS = ("workload", "config", "status") + tuple(m.name for m in METRICS)


@dataclass
class Change:
    old: float | None
    new: float | None
    change: float | None  # relative
    tone: str = ""  # "better", "worse" or ""


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
    flags: set[str] = field(default_factory=set)  # "regressed", "improved", "new_failures", "new_graph_breaks"


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


def build_results_by_series(*, build_id: int, machine_class: str) -> dict[int, dict]:
    rows = (
        Result.objects.filter(build_id=build_id, series__machine_class=machine_class)
        .order_by("id")
        .values("id", "series_id", "config_id", "workload__name", "status", "speedup_noise", *(m.name for m in METRICS))
    )
    return latest_per_series(rows)


def builds_compare(*, base: Build, head: Build, machine_class: str, metric: str = "speedup", threshold: float = 0.05) -> Comparison:
    """``metric`` and ``threshold`` decide "regressed" and "improved": the metric moved the wrong
    (right) way by more than ``threshold`` (relative) and, for speedup, by more than the two cases'
    own noise added up. A pass turning into a failure is a regression, the reverse an improvement."""
    configs = {c.id: c for c in Config.objects.all()}
    old = build_results_by_series(build_id=base.id, machine_class=machine_class)
    new = build_results_by_series(build_id=head.id, machine_class=machine_class)
    out = Comparison(base=base, head=head, machine_class=machine_class, metric=metric, threshold=threshold)
    chosen = METRICS_BY_NAME[metric]
    for series_id, n in new.items():
        o = old.get(series_id)
        label = config_label(configs[n["config_id"]])
        if o is None:
            out.only_head.append(OneSided(n["workload__name"], label, n["status"], n["id"]))
            continue
        row = CompareRow(
            series_id=series_id, workload=n["workload__name"], config=label, base_status=o["status"],
            head_status=n["status"], base_result_id=o["id"], head_result_id=n["id"], changes={},
            cfg=configs[n["config_id"]],
        )
        for m in METRICS:
            change = Change(o[m.name], n[m.name], relative_change(o[m.name], n[m.name]))
            if change_past_noise(m, change.change, threshold=threshold, noises=(o["speedup_noise"], n["speedup_noise"])):
                change.tone = "worse" if m.worse(change.change) else "better"
            row.changes[m.name] = change
        _flag(row, chosen)
        out.rows.append(row)
    for series_id, o in old.items():
        if series_id not in new:
            out.only_base.append(OneSided(o["workload__name"], config_label(configs[o["config_id"]]), o["status"], o["id"]))
    out.rows.sort(key=lambda r: (r.workload, r.config))
    out.only_base.sort(key=lambda r: (r.workload, r.config))
    out.only_head.sort(key=lambda r: (r.workload, r.config))
    return out


def change_past_noise(metric, change: float | None, *, threshold: float, noises: tuple[float | None, float | None]) -> bool:
    """The one rule for a cell's colour and the "regressed"/"improved" filters: the change is past
    ``threshold`` (a count: any change) and, for speedup, past the two cases' own noise added up."""
    if change is None:
        return False
    bar = threshold if metric.noisy else 1e-12
    if metric.name == "speedup":
        bar = max(bar, sum(n or 0 for n in noises))
    return abs(change) > bar


def _flag(row: CompareRow, metric) -> None:
    """Flags from the status change, else from the chosen metric's colour (``change_past_noise``)."""
    was_pass, is_pass = row.base_status == "pass", row.head_status == "pass"
    if was_pass and not is_pass:
        row.flags |= {"new_failures", "regressed"}
    elif is_pass and not was_pass:
        row.flags.add("improved")
    elif was_pass and is_pass and row.changes[metric.name].tone:
        row.flags.add("regressed" if row.changes[metric.name].tone == "worse" else "improved")
    breaks = row.changes["graph_break_count"]
    if breaks.old is not None and breaks.new is not None and breaks.new > breaks.old:
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


def compare_summary(*, rows: list[CompareRow], threshold: float = 0.05) -> dict[str, Change]:
    """The geomean row: per metric, the geomean of old and of new over the rows where both sides
    passed and have the value (totals for the counts), and the relative change between them."""
    out = {}
    both = [r for r in rows if r.base_status == "pass" and r.head_status == "pass"]
    for m in METRICS:
        pairs = [(r.changes[m.name].old, r.changes[m.name].new) for r in both]
        pairs = [(o, n) for o, n in pairs if o is not None and n is not None]
        if m.noisy:
            old, new = geomean(o for o, _ in pairs), geomean(n for _, n in pairs)
        else:
            old, new = (float(sum(o for o, _ in pairs)), float(sum(n for _, n in pairs))) if pairs else (None, None)
        change = Change(old, new, relative_change(old, new))
        if change.change and abs(change.change) >= (threshold if m.noisy else 1e-12):
            change.tone = "worse" if m.worse(change.change) else "better"
        out[m.name] = change
    return out
