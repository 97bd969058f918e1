"""Pure aggregation of result rows (no Django): shared by the summary tables and the pages, so a
figure on the overview is computed the same way whether it comes from a summary row or from two
builds' results compared case by case."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from contract.comparison import geomean, mean, relative_change  # noqa: F401 (the pages' aggregates read them here)
from contract.findings import BLOCK_TIMED_METRICS, TWO_RUNS_95, sd_of_halfwidth, too_noisy
from contract.metrics import SUMMARIZED

PASS = "pass"

# (column of Result, summary field, how it aggregates) for the per-configuration figures
# (contract.metrics: each metric's ``summary``). Means and geomeans are over passing cases that have
# the metric; totals are over every case.
FIGURES = tuple((m.name, m.summary.field, m.summary.how) for m in SUMMARIZED)
FIGURE_COLUMNS = tuple(column for column, _, _ in FIGURES)
TOTAL_MAX = 2**31 - 1  # a total's column (PositiveIntegerField) holds no more


def aggregate(rows: list[dict]) -> dict:
    """The overview's figures for a set of cases: each row is a dict of ``status`` and the
    ``FIGURE_COLUMNS``. Returns ``cases``, ``passed`` and each summary field."""
    passing = [r for r in rows if r["status"] == PASS]
    out: dict = {"cases": len(rows), "passed": len(passing)}
    for column, field, how in FIGURES:
        if how == "total":
            out[field] = min(sum(r[column] or 0 for r in rows), TOTAL_MAX)
        elif how == "mean":
            out[field] = mean(r[column] for r in passing)
        else:
            out[field] = geomean(r[column] for r in passing)
    return out


def latest_per_series(rows: Iterable[dict]) -> dict[int, dict]:
    """One row per series: the rows come in the order they were stored (by id), so a later row
    replaces an earlier one (a build measured twice on a machine class counts each case once,
    the result stored last)."""
    out: dict[int, dict] = {}
    for row in rows:
        out[row["series_id"]] = row
    return out


def median_interval(samples: list[float] | None) -> tuple[float, float] | None:
    """A distribution-free ~95% interval of the median (order statistics of a binomial(n, 1/2)):
    the noise band drawn around a latency from its stored timing samples."""
    if not samples:
        return None
    values = sorted(v for v in samples if isinstance(v, (int, float)))
    n = len(values)
    if n == 0:
        return None
    half = 1.96 * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half))
    high = min(n - 1, math.ceil(n / 2 + half) - 1)
    return values[low], values[high]


@dataclass(frozen=True)
class Figure:
    """A column of the overview: a ConfigSummary field (or "pass_rate") and how it aggregates."""

    key: str
    label: str
    higher_is_better: bool
    how: str  # "rate", "geomean", "mean", "total"
    column: str = ""  # the Result column it aggregates
    unit: str = ""
    # A relative change this large colours the cell, strongly at the second (noisy figures).
    thresholds: tuple[float, float] = (0.02, 0.05)

    @property
    def change_kind(self) -> str:
        """How its change is written: in percentage points, as a count, or relative."""
        return {"rate": "points", "total": "count"}.get(self.how, "relative")


# The overview's columns, in order: the pass rate, then each summarized metric the overview labels.
OVERVIEW_FIGURES: tuple[Figure, ...] = (
    Figure("pass_rate", "pass rate", True, "rate", unit="rate"),
    *(Figure(m.summary.field, m.summary.label, m.higher_is_better, m.summary.how, m.name, m.unit, m.summary.thresholds)
      for m in SUMMARIZED if m.summary.label),
)


def figure_noise(old_rows: list[dict], new_rows: list[dict], figure: Figure) -> tuple[float | None, bool]:
    """The noise a change of a block-timed figure (geomean speedup) is judged against
    (docs/noise-and-findings.md, the /compare/ geomean row's rule): each case's own stated noise
    (``speedup_noise`` of either build, as an sd), the mean over the cases of its two-runs 95 %
    band, leaving out the cases too noisy to track; ``(None, True)`` when every case is too noisy,
    ``(None, False)`` when no case stated one or the figure is not block-timed."""
    if figure.column not in BLOCK_TIMED_METRICS:
        return None, False
    sds = []
    for o, n in zip(old_rows, new_rows):
        if o["status"] == PASS and n["status"] == PASS and o[figure.column] is not None and n[figure.column] is not None:
            stated = [sd for sd in (sd_of_halfwidth(o.get("speedup_noise")), sd_of_halfwidth(n.get("speedup_noise"))) if sd is not None]
            sds.append(max(stated) if stated else None)
    if sds and all(too_noisy(sd) for sd in sds):
        return None, True
    kept = [TWO_RUNS_95 * sd for sd in sds if sd is not None and not too_noisy(sd)]
    return (sum(kept) / len(kept) if kept else None), False


def figures_compare(old_rows: list[dict], new_rows: list[dict], figure: Figure) -> tuple[float | None, float | None]:
    """A figure over the cases present in both builds (rows paired by position): pass rate over
    all of them, means and geomeans over the cases that passed in both with the metric in both
    (a block-timed figure's over those not too noisy to track, when any is not: ``figure_noise``),
    totals over all of them."""
    if figure.how == "rate":
        n = len(old_rows)
        if not n:
            return None, None
        return sum(r["status"] == PASS for r in old_rows) / n, sum(r["status"] == PASS for r in new_rows) / n
    if figure.how == "total":
        return float(sum(r[figure.column] or 0 for r in old_rows)), float(sum(r[figure.column] or 0 for r in new_rows))
    def tracked(o: dict, n: dict) -> bool:
        return not any(too_noisy(sd_of_halfwidth(r.get("speedup_noise"))) for r in (o, n))

    pairs = [
        (o, n)
        for o, n in zip(old_rows, new_rows)
        if o["status"] == PASS and n["status"] == PASS and o[figure.column] is not None and n[figure.column] is not None
    ]
    if figure.column in BLOCK_TIMED_METRICS and any(tracked(o, n) for o, n in pairs):
        pairs = [(o, n) for o, n in pairs if tracked(o, n)]
    pairs = [(o[figure.column], n[figure.column]) for o, n in pairs]
    combine = geomean if figure.how == "geomean" else mean
    return combine(o for o, _ in pairs), combine(n for _, n in pairs)


def versus(old_cases: dict[int, dict], new_cases: dict[int, dict]) -> dict[int, dict]:
    """Per config id: the overview's figures over the cases present in both builds, as stored in
    ``ConfigSummary.versus_previous``: ``{"common": n, <figure key>: [old, new], ..., "noise": {<figure key>:
    its 95 % band}, "too_noisy": [<figure key>, ...]}`` (``figure_noise``)."""
    by_config: dict[int, list[int]] = {}
    for series_id, row in new_cases.items():
        if series_id in old_cases:
            by_config.setdefault(row["config_id"], []).append(series_id)
    out = {}
    for config_id, series_ids in by_config.items():
        old_rows = [old_cases[s] for s in series_ids]
        new_rows = [new_cases[s] for s in series_ids]
        entry: dict = {"common": len(series_ids), "noise": {}, "too_noisy": []}
        for figure in OVERVIEW_FIGURES:
            entry[figure.key] = list(figures_compare(old_rows, new_rows, figure))
            band, noisy = figure_noise(old_rows, new_rows, figure)
            if band is not None:
                entry["noise"][figure.key] = band
            if noisy:
                entry["too_noisy"].append(figure.key)
        out[config_id] = entry
    return out
