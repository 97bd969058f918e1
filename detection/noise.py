"""Noise estimates: within one run (from replicate samples) and between builds (from the series).

All scales are relative (standard deviations of the natural log of the metric, so 0.01 is about 1%).

- Within-run noise says how precisely one run measured its point: the standard error of the point's
  estimate (a median) from the run's replicate samples.
- Between-build noise says how much two runs of the same code differ: it includes the within-run
  noise plus everything that changes between runs (machine state, clocks, allocator, compilation).
  On the H100 runs in ``bench/results`` it is several times the within-run noise for some cases
  (moe_routing static: within-run standard error 0.2%, two runs 1.1% apart), so the detector tests
  against the between-build noise and uses the within-run noise only as a floor.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

MAD_TO_SD = 1.482602218505602  # sd of a normal distribution over its median absolute deviation
MEDIAN_SE_FACTOR = 1.2533141373155001  # sd of a median over sd/sqrt(n), large n (sqrt(pi/2))


def speedup_replicates(eager_ms: Sequence[float], compiled_ms: Sequence[float]) -> list[float]:
    """Per-block speedups of an interleaved run (eager block i over compiled block i).

    The runner times eager and compiled blocks in pairs; the ratio of a pair is one replicate of the
    speedup. Pairs with a non-positive time are dropped.
    """
    if len(eager_ms) != len(compiled_ms):
        raise ValueError(f"unpaired samples: {len(eager_ms)} eager blocks, {len(compiled_ms)} compiled blocks")
    ratios = []
    for e, c in zip(eager_ms, compiled_ms):
        e, c = _positive(e), _positive(c)
        if e is not None and c is not None and math.isfinite(e / c):
            ratios.append(e / c)
    return ratios


def _positive(value) -> float | None:
    """``value`` as a finite positive float, or None (not a number, past float range, zero, negative)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _positives(values) -> np.ndarray:
    """The finite positive numbers among ``values``, as floats: what a log can take."""
    return np.asarray([x for x in map(_positive, values) if x is not None], dtype=float)


def within_run_se(samples: Sequence[float] | None) -> float:
    """Relative standard error of a run's point estimate (a median) from its replicate samples.

    Robust: the scale is the MAD of the log samples, so a few slow blocks do not inflate it.
    NaN when there are fewer than 3 usable samples.
    """
    if samples is None:
        return math.nan
    arr = _positives(samples)
    if arr.size < 3:
        return math.nan
    logs = np.log(arr)
    mad = float(np.median(np.abs(logs - np.median(logs))))
    return MAD_TO_SD * mad * MEDIAN_SE_FACTOR / math.sqrt(arr.size)


def within_run_ses(runs: Sequence[Sequence[float] | None]) -> list[float]:
    """``within_run_se`` of each run's samples, the same numbers to the bit, computed together for
    the runs with as many usable samples (one ``np.median`` over a matrix instead of two per run:
    /compare/'s noise bands take it over 30 builds x 1,920 series x 2 metrics)."""
    out = [math.nan] * len(runs)
    by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, samples in enumerate(runs):
        arr = _positives(samples) if samples is not None else None
        if arr is not None and arr.size >= 3:
            by_size.setdefault(arr.size, []).append((i, arr))
    for size, found in by_size.items():
        logs = np.log(np.stack([arr for _, arr in found]))
        mads = np.median(np.abs(logs - np.median(logs, axis=1, keepdims=True)), axis=1)
        for (i, _), mad in zip(found, mads.tolist()):
            out[i] = MAD_TO_SD * mad * MEDIAN_SE_FACTOR / math.sqrt(size)
    return out


def between_build_noise(values: Sequence[float | None]) -> float:
    """Robust relative sd of build-to-build noise of a series: MAD of log first differences / sqrt(2).

    First differences cancel the level, so a step in the series costs one large difference, which the
    median ignores. NaN with fewer than 4 valid points. Autocorrelated noise makes this an
    underestimate of the marginal sd (it estimates sd * sqrt(1 - rho)); the detector corrects for it.
    """
    arr = _positives(values)
    if arr.size < 4:
        return math.nan
    diffs = np.diff(np.log(arr))
    return MAD_TO_SD * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2.0)


def noise_summary(values: Sequence[float | None], samples: Sequence[Sequence[float] | None] | None = None) -> dict:
    """Both noises of a series: ``between_build`` (from the values) and ``within_run`` (median
    standard error of a point from its samples; NaN without samples)."""
    within = math.nan
    if samples is not None:
        ses = np.asarray([within_run_se(s) for s in samples], dtype=float)
        if np.isfinite(ses).any():
            within = float(np.nanmedian(ses))
    return {"between_build": between_build_noise(values), "within_run": within}
