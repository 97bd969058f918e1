"""One comparison engine (issue #34): a metric's base and head values, their change and its tone,
one case at a time (``judge``) and pooled over cases (``pooled``: a geomean or total row).

/compare/ (page and API), the A/B page and the home page's class tables all decide "changed" or
"same" here, by the one noise rule of ``contract.findings.judge`` (docs/noise-and-findings.md):

- a timed (noisy) metric's change is relative; it is a change only past ``max(threshold, noise)``,
  ``noise`` being the series' two-runs 95 % band (floored at ``floor``); past ``TOO_NOISY_SD`` of
  run-to-run sd (the band over ``TWO_RUNS_95``, or ``within_sd``: either side's own stated noise)
  it is too noisy to track: no colour;
- a count (graph breaks, recompiles) changes by any difference.

The surfaces differ only in their settings (/compare/ a 5 % threshold, the A/B page none and a
noise floor) and in how they write a cell. Selecting the two builds' cases is
``dashboard.results.selectors.pairs``. Pure Python: no Django, no torch.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from contract.findings import BETTER as BETTER_WORD
from contract.findings import TOO_NOISY as TOO_NOISY_WORD
from contract.findings import TWO_RUNS_95, WORSE as WORSE_WORD, judge as judge_word, too_noisy
from contract.metrics import HIGHER_IS_BETTER, Metric

WORSE, BETTER = "worse", "better"
SAME = "same"  # within noise (a timed change), or a count that did not change
TOO_NOISY = "too_noisy"  # the series' noise is past contract.findings.TOO_NOISY_SD: no colour, no flag
REFERENCE_CHANGED = "reference_changed"  # compile_cpu_ratio measured against two references: not compared
NOT_POOLED = (TOO_NOISY, REFERENCE_CHANGED)  # cases a pooled row leaves out


@dataclass(frozen=True)
class Judged:
    """One metric of a base and a head: the change and its tone."""

    old: float | None
    new: float | None
    change: float | None  # relative (new / old - 1); None where it has none (old 0, a side missing)
    difference: float | None  # new - old (how a count's change is written)
    noise: float | None  # the relative 95 % band a timed change was judged against; None for a count
    tone: str  # WORSE, BETTER, SAME, TOO_NOISY, REFERENCE_CHANGED or "" (nothing to judge)


def relative_change(old: float | None, new: float | None) -> float | None:
    if old is None or new is None or old == 0:
        return None
    change = new / old - 1.0
    return change if math.isfinite(change) else None  # a tiny old value: no relative change to show


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive values; None when there are none."""
    logs = [math.log(v) for v in values if v is not None and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def mean(values: Iterable[float | None]) -> float | None:
    """The mean; one that a plain sum would overflow (values near the float maximum) is summed divided first."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    return total / len(present) if math.isfinite(total) else sum(v / len(present) for v in present)


def repeat_sd(groups: Iterable[Iterable[float | None]]) -> float | None:
    """The run-to-run sd (of the log) that repeated runs show: each group is one build's runs of one
    case, its values around their own mean, pooled over the groups; None without a repeated run.
    Two runs of each of the two builds compared (the quick start's cpu class: compile time 27-74 %)
    are evidence enough that a change is not to be read: it is a case's own stated noise."""
    squares, dof = 0.0, 0
    for group in groups:
        logs = [math.log(v) for v in group if v is not None and v > 0]
        if len(logs) > 1:
            centre = sum(logs) / len(logs)
            squares += sum((x - centre) ** 2 for x in logs)
            dof += len(logs) - 1
    return math.sqrt(squares / dof) if dof else None


def case_sd(*, band: float | None, within_sd: float | None) -> float | None:
    """A case's run-to-run sd: the larger of its series' (the two-runs ``band`` over ``TWO_RUNS_95``)
    and ``within_sd`` (either side's own stated noise)."""
    series_sd = band / TWO_RUNS_95 if band is not None else None  # max() of the present ones, written out: /compare/ asks 25,000 times
    if series_sd is None or within_sd is None:
        return within_sd if series_sd is None else series_sd
    return within_sd if within_sd > series_sd else series_sd


_TONES = {WORSE_WORD: WORSE, BETTER_WORD: BETTER, TOO_NOISY_WORD: TOO_NOISY}  # contract.findings' word -> a tone


def judge(metric: Metric, old: float | None, new: float | None, *, threshold: float = 0.0, noise: float | None = None,
          floor: float = 0.0, within_sd: float | None = None) -> Judged:
    """One metric of one case (or of a pooled row): its change and tone. A timed change is past
    ``max(threshold, noise)`` (``noise`` floored at ``floor``, where ``floor`` is set); a count
    by any difference."""
    difference = new - old if old is not None and new is not None else None
    if metric.noisy and floor:
        noise = max(noise or 0.0, floor)
    noise = noise if metric.noisy else None
    change, tone, _ = judge_cell(metric, old, new, threshold, noise, within_sd)
    return Judged(old, new, change, difference, noise, tone)


def judge_cell(metric: Metric, old: float | None, new: float | None, threshold: float, noise: float | None,
               within_sd: float | None) -> tuple[float | None, str, float | None]:
    """``judge``'s change and tone of one case's metric, and a timed metric's ``case_sd`` (None for a
    count), as a tuple: the rule ``judge`` applies (it calls this), written out for a loop without a
    ``Judged`` (/compare/ judges 1,920 cases x 9 metrics per request: issue #46 item 13). ``noise``: the band, already floored."""
    if old is None or new is None:
        change = None
    else:  # relative_change, written out
        change = new / old - 1.0 if old != 0 else None
        if change is not None and not math.isfinite(change):
            change = None
    higher = metric.direction == HIGHER_IS_BETTER
    if not metric.noisy:  # a count: WORSE or BETTER by any difference, else SAME
        if old is None or new is None:
            return change, "", None
        difference = new - old
        if difference == 0:
            return change, SAME, None
        return change, WORSE if (difference < 0 if higher else difference > 0) else BETTER, None
    sd = case_sd(band=noise, within_sd=within_sd)
    if change is None:
        return None, "", sd
    band = noise or 0.0  # the bar: max(threshold, band), written out
    word = judge_word(change=change, bar=band if band > threshold else threshold, worse=change < 0 if higher else change > 0, sd=sd)
    return change, _TONES.get(word, SAME), sd


def pooling(old: float | None, new: float | None, *, noise: float | None, within_sd: float | None = None) -> Judged:
    """A case as ``pooled`` reads it, when only the row is shown (the home page's cells): its values,
    its band, and TOO_NOISY where ``case_sd`` is past the bound (no tone of its own: cheaper than
    ``judge`` over a build's 1,920 cases x 4 figures)."""
    sd = case_sd(band=noise, within_sd=within_sd)
    return Judged(old, new, None, None, noise, TOO_NOISY if too_noisy(sd) else "")


def pooled(metric: Metric, cases: list[Judged], *, threshold: float = 0.0, floor: float = 0.0, how: str = "geomean") -> Judged:
    """The row over ``cases`` (each judged, both sides passing; read: old, new, noise, tone, so a
    surface may pass its own cells that hold them): the geomean (``how``: or the mean)
    of the old and of the new values of a timed metric (a count: the totals) over the cases that have both, less those
    too noisy to track or not compared (every case is: the row says so, with no values), judged
    against the mean of the cases' noise bands (conservative: averaging cases would shrink it)."""
    present = [c for c in cases if c.old is not None and c.new is not None]
    kept = [c for c in present if c.tone not in NOT_POOLED]
    if present and not kept:
        return Judged(None, None, None, None, None, present[0].tone)
    if not metric.noisy:
        old, new = (float(sum(c.old for c in kept)), float(sum(c.new for c in kept))) if kept else (None, None)
        return judge(metric, old, new)
    noises = [c.noise for c in kept if c.noise is not None]
    combine = geomean if how == "geomean" else mean
    return judge(metric, combine(c.old for c in kept), combine(c.new for c in kept), threshold=threshold,
                 noise=sum(noises) / len(noises) if noises else None, floor=floor)
