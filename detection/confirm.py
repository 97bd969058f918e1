"""Confirmation by re-measurement: decide on the combined runs of the previous and the new build.

When the online detector reports a ``suspect`` (the newest build looks changed, the evidence is short
of the alert bar), the dashboard re-runs the case on the new and on the previous build and calls
``confirm_with_remeasurement`` with every run's replicate samples.

Each run is reduced to its level (median of its log samples) and its within-run standard error.
Two runs of the same build differ by more than their samples say (between-run noise), so a run's
variance is the larger of its squared standard error and ``between_run_sigma``² (the detector's
``ChangePoint.noise`` is the right value: the series' build-to-build sd); with two or more runs on a
side and no ``between_run_sigma``, the spread of the runs' levels estimates it. ``history`` (values of
earlier builds at the old level, e.g. the before window) joins the old side as one run each.

Decision: ``|z| >= confirm_z`` -> 'regression' or 'improvement' (by the metric's direction);
``|z| < reject_z`` -> 'no_change'; in between -> 'inconclusive' (re-measure again or wait for builds).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from .noise import within_run_se
from .online import confidence as _confidence
from .types import direction_sign


@dataclass(frozen=True)
class Confirmation:
    decision: str  # 'regression' | 'improvement' | 'no_change' | 'inconclusive'
    relative_change: float  # new/old - 1 of the metric
    magnitude: float  # signed by goodness: negative is worse
    before: float  # combined level of the old build (geometric mean of run medians)
    after: float
    z: float  # signed like magnitude
    confidence: float  # 1 - two-sided p of z
    runs_old: int
    runs_new: int
    run_sigma: float  # per-run relative sd used

    def to_dict(self) -> dict:
        return asdict(self)


def _runs(samples) -> list[list[float]]:
    """Accept one run (a flat list of numbers) or several runs (a list of lists)."""
    if samples is None or len(samples) == 0:
        return []
    if all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in samples):
        return [list(samples)]
    return [list(run) for run in samples if run is not None and len(run) > 0]


def _levels(runs: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    levels, ses = [], []
    for run in runs:
        arr = np.asarray(run, dtype=float)
        arr = arr[np.isfinite(arr) & (arr > 0)]
        if arr.size == 0:
            continue
        levels.append(float(np.median(np.log(arr))))
        se = within_run_se(arr.tolist())
        ses.append(se if math.isfinite(se) else 0.0)
    return np.asarray(levels), np.asarray(ses)


def confirm_with_remeasurement(
    old_samples: Sequence,
    new_samples: Sequence,
    direction: str,
    *,
    between_run_sigma: float | None = None,
    history: Sequence[float] | None = None,
    confirm_z: float = 3.0,
    reject_z: float = 1.5,
) -> Confirmation:
    """Decide whether the new build changed the metric, from all runs of both builds.

    ``old_samples`` / ``new_samples``: one run's replicate samples (list of numbers) or several runs
    (list of lists), e.g. per-block speedups from ``speedup_replicates``. Raises ValueError when a
    side has no usable run.
    """
    sign = direction_sign(direction)
    old_lv, old_se = _levels(_runs(old_samples))
    new_lv, new_se = _levels(_runs(new_samples))
    hist = np.asarray([v for v in (history or []) if v is not None and math.isfinite(v) and v > 0], dtype=float)
    if old_lv.size + hist.size == 0:
        raise ValueError("old_samples: no usable run (need positive numbers)")
    if new_lv.size == 0:
        raise ValueError("new_samples: no usable run (need positive numbers)")
    sigma = between_run_sigma if between_run_sigma and between_run_sigma > 0 else None
    if sigma is None:
        spreads = [np.var(side, ddof=1) for side in (old_lv, new_lv) if side.size >= 2]
        dof = sum(side.size - 1 for side in (old_lv, new_lv) if side.size >= 2)
        if hist.size >= 3:
            spreads.append(np.var(np.log(hist), ddof=1))
            dof += hist.size - 1
        if spreads:
            sigma = math.sqrt(float(np.mean(spreads)))
    run_sigma = sigma or 0.0
    old_var = np.maximum(old_se**2, run_sigma**2)
    new_var = np.maximum(new_se**2, run_sigma**2)
    old_all = np.concatenate([old_lv, np.log(hist)]) if hist.size else old_lv
    old_var_all = np.concatenate([old_var, np.full(hist.size, max(run_sigma**2, float(np.median(old_se**2)) if old_se.size else 0.0))]) if hist.size else old_var
    # inverse-variance weighted levels
    w_old, w_new = 1.0 / np.maximum(old_var_all, 1e-18), 1.0 / np.maximum(new_var, 1e-18)
    lvl_old = float(np.sum(w_old * old_all) / np.sum(w_old))
    lvl_new = float(np.sum(w_new * new_lv) / np.sum(w_new))
    se = math.sqrt(1.0 / np.sum(w_old) + 1.0 / np.sum(w_new))
    shift = sign * (lvl_new - lvl_old)
    if se > 0:
        z = shift / se
    else:
        z = math.copysign(math.inf, shift) if shift else 0.0
    rel = math.exp(lvl_new - lvl_old) - 1.0
    if abs(z) >= confirm_z:
        decision = "improvement" if z > 0 else "regression"
    elif abs(z) < reject_z:
        decision = "no_change"
    else:
        decision = "inconclusive"
    return Confirmation(
        decision=decision, relative_change=rel, magnitude=sign * rel, before=math.exp(lvl_old),
        after=math.exp(lvl_new), z=float(z), confidence=_confidence(z, 2) if math.isfinite(z) else 1.0,
        runs_old=int(old_all.size), runs_new=int(new_lv.size), run_sigma=run_sigma,
    )
