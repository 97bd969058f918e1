"""Compare two builds on a machine class, case by case: only the cases present in both are
compared; the others are listed apart. Reads two builds' rows through ``result_build_series``.

A timed change is judged against its series' noise band (``NoiseBands``: where two runs of one
unchanged build differ 95 % of the time, the A/B page's rule); the noise model lives in
``dashboard.regressions`` (``dashboard.regressions.compare`` passes it in). compile_cpu_ratio
measured against different compile references on the two sides is not compared
(``REFERENCE_CHANGED``, ``dashboard.results.compile_reference``)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from contract.findings import BETTER, BLOCK_TIMED_METRICS, TWO_RUNS_95, WORSE, judge, sd_of_halfwidth
from contract.findings import TOO_NOISY as TOO_NOISY_WORD
from dashboard.results.aggregates import geomean, latest_per_series, relative_change
from dashboard.results.compile_reference import REFERENCED_METRICS, reference_changed
from dashboard.results.models import Build, Config, Result
from dashboard.results.selectors.common import METRICS, METRICS_BY_NAME, config_label

FILTERS = ("all", "regressed", "improved", "new_failures", "new_graph_breaks")
SORT_KEYS = ("workload", "config", "status") + tuple(m.name for m in METRICS)
WITHIN_NOISE = "same"
TOO_NOISY = "too_noisy"  # the series' noise is past contract.findings.TOO_NOISY_SD: no colour, no flag
REFERENCE_CHANGED = "reference_changed"  # the tone of a compile_cpu_ratio measured against two references: no change shown
NoiseBands = Callable[[int], dict[str, float]]  # series id -> per timed metric, its relative 95 % band


@dataclass
class Change:
    old: float | None
    new: float | None
    change: float | None  # relative
    tone: str = ""  # "better", "worse", WITHIN_NOISE (a timed change inside its noise), TOO_NOISY, REFERENCE_CHANGED or ""
    noise: float | None = None  # the relative band a timed change is judged against


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
        .values("id", "series_id", "config_id", "workload__name", "status", "compile_reference", "speedup_noise",
                *(m.name for m in METRICS))
    )
    return latest_per_series(rows)


def builds_compare(*, base: Build, head: Build, machine_class: str, noise_bands: NoiseBands, metric: str = "speedup",
                   threshold: float = 0.05) -> Comparison:
    """``metric`` and ``threshold`` decide "regressed" and "improved": the metric moved the wrong
    (right) way by more than ``threshold`` (relative) and by more than the series' noise band
    (``noise_bands``). A pass turning into a failure is a regression, the reverse an improvement."""
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
        bands = noise_bands(series_id)
        within = max((sd for sd in (sd_of_halfwidth(o["speedup_noise"]), sd_of_halfwidth(n["speedup_noise"]))
                      if sd is not None), default=None)  # each side's own stated noise
        row.changes = {m.name: judge_change(m, o[m.name], n[m.name], threshold=threshold, noise=bands.get(m.name),
                                            within_sd=within if m.name in BLOCK_TIMED_METRICS else None)
                       for m in METRICS}
        for name in REFERENCED_METRICS:  # measured against two compile references: not comparable
            if name in row.changes and reference_changed(name, o.get("compile_reference"), n.get("compile_reference")) \
                    and o[name] is not None and n[name] is not None:
                row.changes[name] = Change(o[name], n[name], None, REFERENCE_CHANGED, bands.get(name))
        _flag(row, chosen)
        out.rows.append(row)
    for series_id, o in old.items():
        if series_id not in new:
            out.only_base.append(OneSided(o["workload__name"], config_label(configs[o["config_id"]]), o["status"], o["id"]))
    out.rows.sort(key=lambda r: (r.workload, r.config))
    out.only_base.sort(key=lambda r: (r.workload, r.config))
    out.only_head.sort(key=lambda r: (r.workload, r.config))
    return out


def judge_change(metric, old: float | None, new: float | None, *, threshold: float, noise: float | None,
                 within_sd: float | None = None) -> Change:
    """The one rule for a cell's colour and the "regressed"/"improved" filters (``contract.findings.judge``,
    docs/noise-and-findings.md): a timed change is past ``threshold`` and past its ``noise`` band
    (else WITHIN_NOISE), unless the series is too noisy to track (TOO_NOISY: its run-to-run sd, the
    band over ``TWO_RUNS_95``, or ``within_sd``, either side's own stated noise, past the bound); a
    count changes by any difference."""
    change = Change(old, new, relative_change(old, new), noise=noise if metric.noisy else None)
    if change.change is None:
        return change
    change.tone = noise_tone(metric, change.change, bar=max(threshold, noise or 0.0), noise=noise, within_sd=within_sd)
    return change


def noise_tone(metric, change: float, *, bar: float, noise: float | None, within_sd: float | None = None) -> str:
    """``contract.findings.judge`` as a cell's tone: "worse", "better", WITHIN_NOISE (a timed change
    not past ``bar``) or TOO_NOISY (the run-to-run sd, the 95 % ``noise`` band over ``TWO_RUNS_95``,
    or ``within_sd``, past the bound); a count: worse/better by any difference, else ""."""
    if not metric.noisy:
        return "" if change == 0 else ("worse" if metric.worse(change) else "better")
    sd = max((x for x in (noise / TWO_RUNS_95 if noise is not None else None, within_sd) if x is not None), default=None)
    word = judge(change=change, bar=bar, worse=metric.worse(change), sd=sd)
    return {WORSE: "worse", BETTER: "better", TOO_NOISY_WORD: TOO_NOISY}.get(word, WITHIN_NOISE)


def _flag(row: CompareRow, metric) -> None:
    """Flags from the status change, else from the chosen metric's colour (``judge_change``)."""
    was_pass, is_pass = row.base_status == "pass", row.head_status == "pass"
    if was_pass and not is_pass:
        row.flags |= {"new_failures", "regressed"}
    elif is_pass and not was_pass:
        row.flags.add("improved")
    elif was_pass and is_pass and row.changes[metric.name].tone in ("worse", "better"):
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


def compare_summary_cases(*, rows: list[CompareRow]) -> tuple[int, int]:
    """What the geomean row is over: the rows where both sides passed, and how many of them are
    too noisy to track in speedup (left out of its geomean, ``compare_summary``; each figure leaves
    out its own)."""
    both = [r for r in rows if r.base_status == "pass" and r.head_status == "pass"]
    return len(both), sum(1 for r in both if r.changes["speedup"].tone == TOO_NOISY)


def compare_summary(*, rows: list[CompareRow], threshold: float = 0.05) -> dict[str, Change]:
    """The geomean row: per metric, the geomean of old and of new over the rows where both sides
    passed and have the value (totals for the counts), and the relative change between them, judged
    against the mean of the rows' noise bands (conservative: averaging cases would shrink it). Rows
    whose compile references differ are left out of compile_cpu_ratio's (all of them: not compared),
    and rows too noisy to track out of that metric's (all of them: the geomean is too noisy too)."""
    out = {}
    both = [r for r in rows if r.base_status == "pass" and r.head_status == "pass"]
    for m in METRICS:
        present = [r.changes[m.name] for r in both if r.changes[m.name].old is not None and r.changes[m.name].new is not None]
        kept = [c for c in present if c.tone not in (REFERENCE_CHANGED, TOO_NOISY)]  # not compared / too noisy
        if present and not kept:  # every row is: so is the geomean
            out[m.name] = Change(None, None, None, present[0].tone)
            continue
        present = kept
        pairs = [(c.old, c.new) for c in present]
        noises = [c.noise for c in present if c.noise is not None]
        if m.noisy:
            old, new = geomean(o for o, _ in pairs), geomean(n for _, n in pairs)
        else:
            old, new = (float(sum(o for o, _ in pairs)), float(sum(n for _, n in pairs))) if pairs else (None, None)
        out[m.name] = judge_change(m, old, new, threshold=threshold, noise=sum(noises) / len(noises) if noises else None)
    return out
