"""Pure aggregation of result rows (no Django): shared by the summary tables and the pages, so a
figure on the overview is computed the same way whether it comes from a summary row or from two
builds' results compared case by case."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from contract.comparison import geomean, mean, relative_change  # noqa: F401 (the pages' aggregates read them here)
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
