"""Run-to-run noise from real replicates, and the short-history rule (issue #15 items 1 and 3). Pure.

Run-to-run noise of one series and metric (``series_noise``): the robust spread of its
consecutive-build log differences (over / sqrt(2); differences that cross a known change are left
out) pooled with the spread of repeated runs of one build (re-runs, re-measurements). Compile time
and memory are measured once per run, so this is their only noise; for speedup and latency it is
several times the within-run bootstrap (``speedup_noise``) on real GPU data. ``noise_estimate``
picks, in order: the series' own estimate (at least ``MIN_SERIES_DOF`` degrees of freedom, shrunk
toward the prior), a prior per machine class and metric pooled from the series of that class
(``class_prior``), else the metric's default the caller passes (the dashboard: ``contract.metrics``,
see docs/architecture.md). All sds are relative (sd of the log). Detection knows no metric by name.

Short history (``early_check``): with fewer earlier builds than the change-point detector needs
(``min_before``), the newest builds are compared with the median of the builds before them: worse by
at least the metric's floor (the caller's: the HUD bot's 5 % or 15 %) and by ``K_NOISE`` x the noise. One bad
build is a ``suspect``; two bad builds in a row are ``regressed``.

Young series (``young_change_passes``): a series with at most ``YOUNG_BUILDS`` builds before a change,
one run each, has no noise of its own (one or two differences between builds are not run-to-run
noise), so no rule regresses it on a noise estimate: its change must be far outside anything the
class's noise allows, at least ``K_YOUNG`` x the class prior (the caller's: the class's
upper-quartile sd of the metric, else the metric's default) and at least a factor per metric (the
caller's; ``YOUNG_MIN_FACTOR``, 1.5x either way, past every swing between runs of one unchanged build
in the stored real histories: 1.39x on a Hugging Face model's speedup). Otherwise it stays a suspect. Repeated runs of one build
measure the noise: a series whose noise comes from them is not young.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from scipy import special

from .noise import MAD_TO_SD
from .types import direction_sign

K_NOISE = 3.0  # a change must also be this many run-to-run sds
MIN_SERIES_DOF = 4  # degrees of freedom before a series' own estimate is used
PRIOR_DOF = 2.0  # weight of the prior when a series' own estimate is shrunk toward it
MIN_SD = 0.002  # a series that never moved (memory, to the byte) is still taken to move by 0.2 %
MIN_CLASS_SERIES = 2  # series with their own estimate before a class prior exists
WINSOR = 3.0  # squared residuals are capped at this many core (MAD) sds
YOUNG_BUILDS = 2  # a series with at most this many valid builds before a change is young
K_YOUNG = 5.0  # a young series' change must be this many class-prior sds (log)...
YOUNG_MIN_FACTOR = 1.5  # ... and at least this factor either way (after / before or before / after)


@dataclass(frozen=True)
class NoiseEstimate:
    sd: float  # relative run-to-run sd (sd of the log)
    source: str  # 'series' | 'class' | 'default'
    dof: int = 0  # the series' own degrees of freedom (0 for a prior)

    def to_dict(self) -> dict:
        return {**asdict(self), "sd": round(float(self.sd), 6)}


def _residuals(values: Sequence[float | None], runs: Sequence[Sequence[float]] | None, breaks: Sequence[int]) -> np.ndarray:
    """Residuals that each have the run-to-run sd: consecutive log differences / sqrt(2) (not across
    a break: a break index is the first point of a new level) and repeated runs about their mean."""
    out: list[float] = []
    prev = None  # (index, log value)
    cut = set(breaks)
    for i, v in enumerate(values):
        if v is None or not math.isfinite(v) or v <= 0:
            continue
        lv = math.log(v)
        if prev is not None and not any(prev[0] < b <= i for b in cut):
            out.append((lv - prev[1]) / math.sqrt(2.0))
        prev = (i, lv)
    for build_runs in runs or []:
        logs = [math.log(x) for x in build_runs or [] if x is not None and math.isfinite(x) and x > 0]
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            scale = math.sqrt(len(logs) / (len(logs) - 1))
            out.extend((x - mean) * scale for x in logs[:-1])  # n - 1 degrees of freedom
    return np.asarray(out, dtype=float)


def series_noise(values: Sequence[float | None], runs: Sequence[Sequence[float]] | None = None,
                 breaks: Sequence[int] = ()) -> tuple[float, int]:
    """(sd, degrees of freedom) of a series' run-to-run noise: the winsorised RMS of its residuals
    (``_residuals``); ``runs``: per build, the values of its repeated runs; ``breaks``: indices of
    first bad points of known changes. (nan, 0) with no residual."""
    r = _residuals(values, runs, breaks)
    if r.size == 0:
        return math.nan, 0
    core = MAD_TO_SD * float(np.median(np.abs(r)))
    cap = WINSOR * core
    return math.sqrt(float(np.mean(np.minimum(r * r, cap * cap)))), int(r.size)


#: Residuals before a series' estimate joins detection's class prior, which leaves the newest two
#: builds out: fewer than a series needs for its own estimate, since the prior is the upper quartile
#: over several series (with four earlier builds, it comes from the first two residuals of each).
PRIOR_MIN_RESIDUALS = 2


def class_prior(estimates: Sequence[tuple[float, int]], min_dof: int = MIN_SERIES_DOF) -> float:
    """The prior of a machine class and metric: the upper quartile of the sds of its series that
    have their own estimate (nan when fewer than ``MIN_CLASS_SERIES``). Not the median: series of
    one class differ (cold compile time of three workloads on one H100 VM: sd 7 %, 11 %, 15 %), and
    a prior is what a series without its own history is judged by, so it leans to the noisier."""
    sds = [sd for sd, dof in estimates if dof >= min_dof and math.isfinite(sd)]
    return float(np.percentile(sds, 75)) if len(sds) >= MIN_CLASS_SERIES else math.nan


def noise_estimate(values: Sequence[float | None], runs: Sequence[Sequence[float]] | None = None, *, default: float,
                   breaks: Sequence[int] = (), prior: float | None = None, floor: float | None = None) -> NoiseEstimate:
    """The run-to-run noise used for one series of a metric (see the module docstring). ``default``:
    the metric's sd before anything is known; ``prior``: the class prior (nan/None: none); ``floor``:
    a within-run standard error the sd never goes below."""
    base = (NoiseEstimate(prior, "class") if prior is not None and math.isfinite(prior) and prior > 0
            else NoiseEstimate(default, "default"))
    sd, dof = series_noise(values, runs, breaks)
    out = base
    if dof >= MIN_SERIES_DOF:
        # Shrunk toward the prior in log space: a series 20x quieter than its prior (masked_attention's
        # speedup: sd 0.10 % over 10 real runs, prior 2 %) keeps most of its own estimate, where a
        # variance-weighted mean would hand it the prior's.
        shrunk = math.exp((dof * math.log(max(sd, MIN_SD)) + PRIOR_DOF * math.log(base.sd)) / (dof + PRIOR_DOF))
        out = NoiseEstimate(shrunk, "series", dof)
    if floor is not None and math.isfinite(floor) and floor > out.sd:
        out = NoiseEstimate(floor, out.source, out.dof)
    return out


def noise_bar(noise: NoiseEstimate, base: float = K_NOISE) -> float:
    """The bar, in sds, for a change judged against ``noise``: ``base`` for a prior (a class's upper
    quartile or the metric's default: no degrees of freedom of its own), else the Student-t quantile
    at the normal tail of ``base`` with the series' degrees of freedom plus ``PRIOR_DOF`` (the prior it
    was shrunk toward). An sd estimated from five runs underestimates the spread often: timm:resnet50's
    speedup on an H200, 1.27 % over five runs of one build, then a sixth run -5.8 % (z 3.3) because
    its compiled latency moves compile to compile (5.56-5.73 ms, then 5.96 ms) while eager holds.
    With 4 degrees of freedom (+2) the bar at 3 sd is 4.9, with 10 it is 3.8, with many 3."""
    if noise.source != "series" or noise.dof <= 0:
        return base
    return t_bar(noise.dof + PRIOR_DOF, base)


def t_bar(dof: float, base: float = K_NOISE) -> float:
    """Student-t quantile with ``dof`` degrees of freedom at the normal upper tail of ``base``:
    ``scipy.stats.t.isf(scipy.stats.norm.sf(base), dof)`` (``base`` itself as dof grows)."""
    return float(-special.stdtrit(max(float(dof), 1.0), special.ndtr(-base)))


@dataclass(frozen=True)
class EarlyChange:
    """A change found by the short-history rule: ``state`` 'regressed' (two or more bad builds in a
    row) or 'suspect' (the newest build only); indices into the series."""

    state: str
    first_bad: int
    last_good: int
    before: float  # median of the builds before the change
    after: float  # median of the bad builds
    relative_change: float
    magnitude: float  # signed by goodness: negative is worse
    z: float  # log change over the noise sd, signed like magnitude
    bad_builds: int


def is_worse(value: float, baseline: float, *, direction: str, sd: float, floor: float, k: float = K_NOISE) -> bool:
    """``value`` worse than ``baseline`` by at least ``floor`` (relative) and ``k`` x ``sd`` (log)."""
    sign = direction_sign(direction)
    magnitude = sign * (value / baseline - 1.0)
    return magnitude <= -floor and abs(math.log(value / baseline)) >= k * sd


def early_check(values: Sequence[float | None], *, direction: str, sd: float, floor: float, k: float = K_NOISE,
                min_before: int | None = 8, window: int = 10) -> EarlyChange | None:
    """The floor rule on the newest build of ``values`` (None: no value): the newest builds, each
    worse than the median of up to ``window`` builds before them by at least ``floor``, and their
    mean past it by ``k`` x the noise of that difference (``sd`` x sqrt(1/bad + 1/before), in log). With
    ``min_before``, only where fewer valid builds than that precede the change (a series' first
    week; past that the change-point detector decides); ``None``: on any history, as a backstop
    for what the change-point detector's own noise estimate misses. The first build is the
    baseline and is never bad."""
    idx = [i for i, v in enumerate(values) if v is not None and math.isfinite(v) and v > 0]
    if len(idx) < 2 or idx[-1] != len(values) - 1:
        return None
    found, best_z = None, 0.0
    sign = direction_sign(direction)
    # Of the trailing runs of builds (up to ``window``) each worse than the ones before by the floor,
    # the one whose mean moved farthest in units of its noise: where the change began.
    for run in range(1, min(len(idx), window + 1)):
        base_idx, bad_idx = idx[:-run], idx[-run:]
        if min_before is not None and len(base_idx) >= min_before:
            continue
        base = float(np.median([values[i] for i in base_idx[-window:]]))
        if not all(is_worse(values[i], base, direction=direction, sd=sd, floor=floor, k=0.0) for i in bad_idx):
            continue
        mean_log = -sign * float(np.mean([math.log(values[i] / base) for i in bad_idx]))
        if sd <= 0:
            return None
        n_base = min(len(base_idx), window)
        # The bad builds' mean against the builds before it, in units of the noise of that
        # difference (both sides' means are uncertain); where the change began: the run that
        # stands farthest.
        split_z = mean_log / (sd * math.sqrt(1 / len(bad_idx) + 1 / n_base))
        if split_z >= k and split_z > best_z:
            found, best_z = (base_idx, bad_idx, base), split_z
    if found is None:
        return None
    base_idx, bad_idx, base = found
    after = float(np.median([values[i] for i in bad_idx]))
    rel = after / base - 1.0
    sign = direction_sign(direction)
    return EarlyChange(state="regressed" if len(bad_idx) >= 2 else "suspect", first_bad=bad_idx[0],
                       last_good=base_idx[-1], before=base, after=after, relative_change=rel,
                       magnitude=sign * rel, z=sign * math.log(after / base) / sd if sd > 0 else -math.inf,
                       bad_builds=len(bad_idx))


def young_bar(sd: float, min_factor: float = YOUNG_MIN_FACTOR) -> float:
    """The smallest |log change| a young series may be regressed by: ``K_YOUNG`` x ``sd``, at least
    log ``min_factor`` (the caller's per metric; ``YOUNG_MIN_FACTOR`` by default)."""
    return max(K_YOUNG * sd if math.isfinite(sd) else 0.0, math.log(min_factor))


def young_change_passes(before: float, after: float, *, earlier: int, sd: float, measured: bool = False,
                        min_factor: float = YOUNG_MIN_FACTOR) -> bool:
    """Whether a change from ``before`` to ``after`` may be called a regression in a series with
    ``earlier`` valid builds before it: always past ``YOUNG_BUILDS`` or where its noise was
    ``measured`` by repeated runs of one build; in a young series only when ``|log(after / before)|``
    is past ``young_bar(sd)`` (``sd``: the class prior for alike cases, not the series' own one or
    two differences). Non-positive values never pass a young series."""
    if earlier > YOUNG_BUILDS or measured:
        return True
    if not (before > 0 and after > 0):
        return False
    return abs(math.log(after / before)) >= young_bar(sd, min_factor)
