"""The online engine: scan the newest points of a series for a change of level, one regime at a time.

Works on ``g``: the log of the valid points, signed so that larger is better. The series is cut into
regimes by the alerts; inside a regime every statistic of a candidate split ``s`` uses only points of
that regime before ``s`` (the before window) and the points from ``s`` on, so the test at time ``t``
sees nothing newer than ``t`` and replaying a series point by point gives the same alerts as
scanning it whole. Each regime is computed in one vectorised pass over all (split, points-after)
pairs; an alert starts a new regime at its first bad point (re-baselining, so a step is alerted once).

The test of a split ``s`` seen at time ``t`` (``m = t - s + 1`` points after it) passes when all of:

1. ``z``: the mean of the after points' deviations from the before window's median (each winsorised
   at ``clip`` sd around the after points' median) over its standard error is at least the alert
   bar. The standard error uses the noise sd (see ``_split_stats``: first differences, residuals
   about their level, a tail quantile, the within-run noise, ``noise_history``), widened for lag-1
   autocorrelation; the bar is the Student-t quantile at the normal tail of ``alert_z`` for the
   scale's degrees of freedom (fewer with a short history, heavy tails or autocorrelation);
2. robustness: with 2 points after, both are at least ``pair_min`` sd off and within ``pair_spread``
   of each other (a single outlier never alerts); with 3 or more, their median is significant too;
3. rank: the after points are extreme against the before window's empirical distribution (a
   Mann-Whitney z, ``rank_z``), so bimodal machine states and heavy tails need more than a mean shift.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import special

from .noise import MAD_TO_SD
from .types import DetectorConfig

MEDIAN_VAR = 1.45  # variance of a median of 8-30 normal points over that of their mean


@dataclass(frozen=True)
class Hit:
    """A split that passed (alert) or came close on the newest point (suspect); indices into g."""

    s: int
    t: int
    z: float
    n_candidates: int
    before: float  # median of g over the before window
    after: float  # median of g over s..t
    sigma: float


def _windows(values: np.ndarray, starts: np.ndarray, width: int, lower: int) -> np.ndarray:
    """Rows ``values[start - width : start]`` for each start, NaN where the index is < lower."""
    pad = np.full(width, np.nan)
    padded = np.concatenate([pad, values])
    view = sliding_window_view(padded, width)  # view[i] = values[i - width : i]
    rows = view[starts].copy()
    idx = starts[:, None] - width + np.arange(width)[None, :]
    rows[idx < lower] = np.nan
    return rows


def _mean_var(rho: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Var of the mean of k consecutive AR(1) points over sigma^2: (k + 2 sum_{d<k} (k-d) rho^d) / k^2."""
    r = np.clip(rho, 0.0, 0.95)
    s = np.where(r > 0, r * (k - k * r - 1 + r**k) / (1 - r) ** 2, 0.0)
    return (k + 2 * s) / (k * k)


def _ar_variance(rho: np.ndarray, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Var(mean of m points after - median of n points before) / sigma^2 under AR(1) with lag-1 rho."""
    r = np.clip(rho, 0.0, 0.95)
    cov = r * (1 - r**n) * (1 - r**m) / (1 - r) ** 2 / (m * n)
    return _mean_var(r, m) + MEDIAN_VAR * _mean_var(r, n) - 2 * cov


def rank_z(before: np.ndarray, after: np.ndarray, n_before: np.ndarray) -> np.ndarray:
    """Mann-Whitney z of the first m after points against the before window, for every split
    (rows) and every m (columns) at once: U counts before points below each after point (ties
    half), z = (U - m n / 2) / sqrt(m n (m + n + 1) / 12), no tie or continuity correction. NaN
    before points count nowhere (``n_before`` counts the finite ones). Hand-written on purpose:
    ``scipy.stats.mannwhitneyu`` gives this z (tests/detection/test_rank_z.py checks it) but one
    call per (split, m) with NaNs omitted is ~7,000x slower than this one broadcast."""
    below = np.sum(before[:, :, None] < after[:, None, :], axis=1) + 0.5 * np.sum(before[:, :, None] == after[:, None, :], axis=1)
    U = np.cumsum(below, axis=1)
    m = np.arange(1, after.shape[1] + 1)[None, :].astype(float)
    nb = n_before[:, None].astype(float)
    return (U - m * nb / 2.0) / np.sqrt(m * nb * (m + nb + 1) / 12.0)


def _normal_tail(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def confidence(z: float, n_candidates: int) -> float:
    return max(0.0, 1.0 - min(1.0, max(1, n_candidates) * _normal_tail(abs(z))))


class Engine:
    """Scans one series. ``g``: signed log values; ``se``: within-run standard errors (NaN: none)."""

    def __init__(self, g: np.ndarray, se: np.ndarray, cfg: DetectorConfig, prior_sigma: float | None):
        self.g = g
        self.se = se
        self.cfg = cfg
        self.prior = prior_sigma if prior_sigma is not None and math.isfinite(prior_sigma) and prior_sigma > 0 else None
        n = len(g)
        self.diffs = np.diff(g) if n > 1 else np.zeros(0)
        self.hist_resid = np.full(n, np.nan)  # residuals about their regime's median, closed regimes

    # -- per-split statistics (before window and noise scale) --------------------------------------
    def _split_stats(self, splits: np.ndarray, c: int):
        cfg, g = self.cfg, self.g
        before = _windows(g, splits, cfg.before_window, c)
        n_b = np.sum(np.isfinite(before), axis=1)
        level = np.nanmedian(before, axis=1)
        # residuals of the last ``history_window`` points: about the before window's median inside
        # the current regime, about their own regime's median before it (steps already alerted on
        # do not inflate the noise)
        W = cfg.history_window
        resid = _windows(self.hist_resid, splits, W, 0)
        idx = splits[:, None] - W + np.arange(W)[None, :]
        inside = idx >= c
        resid = np.where(inside, _windows(g, splits, W, 0) - level[:, None], resid)
        n_r = np.sum(np.isfinite(resid), axis=1)
        centred = resid - np.nanmedian(resid, axis=1)[:, None]
        core = MAD_TO_SD * np.nanmedian(np.abs(centred), axis=1)
        # winsorised sd: heavy tails count (up to ``winsor`` core sd), single outliers barely do
        cap = (cfg.winsor * core)[:, None]
        sigma_l = np.sqrt(np.nanmean(np.minimum(centred**2, cap**2), axis=1))
        e = np.clip(resid, -2.5 * core[:, None], 2.5 * core[:, None])
        e = e - np.nanmean(e, axis=1)[:, None]
        lag = np.nansum(e[:, 1:] * e[:, :-1], axis=1)
        pairs = np.sum(np.isfinite(e[:, 1:] * e[:, :-1]), axis=1)
        energy = np.nansum(e**2, axis=1)
        rho = np.where((pairs >= 10) & (energy > 0), lag / np.where(energy > 0, energy, 1.0) * n_r / np.maximum(pairs, 1), 0.0)
        nr = np.maximum(n_r, 1).astype(float)
        rho = np.clip(rho + (1.0 + 4.0 * np.clip(rho, 0, 1)) / nr, 0.0, cfg.max_rho)  # small-sample bias of r1
        # residuals about a window median understate the marginal variance by the variance of that
        # median under autocorrelation: undo it
        sigma_l = sigma_l / np.sqrt(np.clip(1.0 - _mean_var(rho, np.maximum(n_b, 1).astype(float)), 0.3, 1.0))
        # first differences between points strictly before the split (diff j joins j and j+1)
        dw = _windows(self.diffs, splits - 1, cfg.scale_window, 0)
        n_d = np.sum(np.isfinite(dw), axis=1)
        absd = np.abs(dw)
        mad_d = MAD_TO_SD * np.nanmedian(absd, axis=1)
        capped = np.minimum(absd, cfg.winsor * mad_d[:, None])
        sigma_d = np.sqrt(np.nanmean(capped**2, axis=1)) / math.sqrt(2.0)
        # tail scale: the 95th percentile of |residual| over its normal value, so heavy tails
        # widen the scale where a core (MAD) estimate would not
        ordered = np.sort(np.abs(centred), axis=1)  # NaN sort last
        pos = np.clip(np.floor(0.95 * (n_r - 1)).astype(int), 0, W - 1)
        sigma_t = np.where(n_r >= 20, ordered[np.arange(len(splits)), pos] / 1.959964, 0.0)
        sigma = np.fmax(np.fmax(sigma_d / np.sqrt(1.0 - rho), sigma_l), cfg.tail_weight * sigma_t)
        # degrees of freedom of that scale: fewer with heavy tails (kurtosis of the winsorised
        # residuals) and with autocorrelation (fewer independent points)
        w2 = np.minimum(centred**2, cap**2)
        kurt = np.nanmean(w2**2, axis=1) / np.maximum(np.nanmean(w2, axis=1) ** 2, 1e-300)
        df = np.minimum(0.9 * n_d, 2.0 * n_r / np.maximum(kurt - 1.0, 2.0)) * (1.0 - rho**2) / (1.0 + rho**2)
        if self.prior is not None:
            w = cfg.prior_weight
            sigma = np.sqrt((df * np.nan_to_num(sigma) ** 2 + w * self.prior**2) / (df + w))
            df = df + w
        if np.isfinite(self.se).any():
            sw = _windows(self.se, splits, cfg.before_window, c)
            if np.isfinite(sw).any():
                with np.errstate(all="ignore"):
                    floor = np.nanmedian(sw, axis=1)
                sigma = np.fmax(sigma, np.nan_to_num(floor))
                df = df + 10.0 * np.isfinite(floor)
        sigma = np.fmax(np.nan_to_num(sigma), cfg.min_noise)  # a constant history still has a scale
        return before, n_b, level, sigma, rho, df

    def _threshold(self, base: float, df: np.ndarray) -> np.ndarray:
        """Student-t bar at the normal tail of ``base`` for a scale with ``df`` (at least 4) degrees
        of freedom: the exact quantile, ``scipy.stats.t.isf(scipy.stats.norm.sf(base), df)``, called
        as the ufuncs under it (``special.stdtrit``, the same numbers, ~5x faster per call)."""
        return -special.stdtrit(np.maximum(df, 4.0), special.ndtr(-base))

    # -- one regime ---------------------------------------------------------------------------------
    def scan_regime(self, c: int, t_min: int, suspect_at: int | None = None) -> tuple[Hit | None, Hit | None]:
        """First alert in the regime starting at ``c`` raised after ``t_min``; and, when
        ``suspect_at`` is the last index, the strongest sub-bar evidence on it."""
        cfg, g = self.cfg, self.g
        n = len(g)
        first_s = c + cfg.min_before
        if first_s > n - 1:
            return None, None
        splits = np.arange(first_s, n)
        K = cfg.max_after
        before, n_b, level, sigma, rho, df = self._split_stats(splits, c)
        # after points: A[i, j] = g[s_i + j]
        pad = np.concatenate([g, np.full(K, np.nan)])
        A = sliding_window_view(pad, K)[splits]
        m = np.arange(1, K + 1)[None, :].astype(float)
        valid = np.isfinite(A)
        dev = A - level[:, None]
        sig = sigma[:, None]
        med_after = np.empty_like(dev)
        for j in range(K):
            med_after[:, j] = np.median(dev[:, : j + 1], axis=1)
        # each after point is winsorised at ``clip`` sd around the median of the after points, so a
        # single outlier among them counts as a large deviation, not as a huge one, while a step of
        # any size passes whole
        lo = (med_after - cfg.clip * sig)[:, None, :]
        hi = (med_after + cfg.clip * sig)[:, None, :]
        tri = np.arange(K)[:, None] <= np.arange(K)[None, :]  # point j is among the first m
        wins = np.clip(dev[:, :, None], lo, hi)
        mean_dev = np.nansum(np.where(tri[None, :, :], wins, 0.0), axis=1) / m
        var = _ar_variance(rho[:, None], m, n_b[:, None].astype(float))
        se_mean = sig * np.sqrt(var)
        z = mean_dev / se_mean
        sign = np.sign(z)
        # robust condition
        robust = np.zeros_like(z, dtype=bool)
        if K >= 2:
            d0, d1 = dev[:, 0], dev[:, 1]
            s2 = sign[:, 1]
            pair_ok = (s2 * d0 >= cfg.pair_min * sigma) & (s2 * d1 >= cfg.pair_min * sigma)
            pair_ok &= np.abs(d0 - d1) <= cfg.pair_spread * math.sqrt(2.0) * sigma
            robust[:, 1] = pair_ok
        if K >= 3:
            med_se = sig * np.sqrt(MEDIAN_VAR * var[:, 2:])
            robust[:, 2:] = sign[:, 2:] * med_after[:, 2:] / med_se >= cfg.robust_z
        rank_ok = sign * rank_z(before, A, n_b) >= cfg.rank_z
        cum_valid = np.cumsum(~valid, axis=1) == 0  # all points s..t exist
        t_idx = splits[:, None] + np.arange(K)[None, :]
        bar = self._threshold(cfg.alert_z, df)[:, None] + np.where(m <= 3, cfg.short_extra, 0.0)
        ok = np.isfinite(z) & cum_valid & (np.abs(z) >= bar) & robust & rank_ok
        ok &= (m >= cfg.min_after) & (t_idx > t_min)
        alert = None
        if ok.any():
            t_star = int(np.min(np.where(ok, t_idx, np.iinfo(np.int64).max)))
            cand = ok & (t_idx == t_star)
            # where it starts: the passing split with the largest unclipped shift statistic
            # (winsorising would pull a normal point just before the step into the new level)
            plain = np.abs(np.cumsum(np.nan_to_num(dev), axis=1) / m / se_mean)
            i, j = np.unravel_index(np.argmax(np.where(cand, plain, -np.inf)), z.shape)
            n_cand = int(np.sum(cum_valid & (t_idx == t_star) & (m >= cfg.min_after)))
            alert = self._hit(splits, i, j, z, level, sigma, n_cand)
        suspect = None
        if suspect_at is not None and (alert is None or alert.t != suspect_at):
            # after an alert at t < suspect_at the caller rescans the new regime; here: newest point
            on_last = cum_valid & (t_idx == suspect_at) & (t_idx > t_min) & np.isfinite(z)
            if on_last.any():
                sbar = self._threshold(cfg.suspect_z, df)[:, None]
                near = on_last & (np.abs(z) >= sbar)
                near &= np.where(m >= 2, robust | (np.abs(z) < bar), True)
                if near.any():
                    i, j = np.unravel_index(np.argmax(np.where(near, np.abs(z), -np.inf)), z.shape)
                    suspect = self._hit(splits, i, j, z, level, sigma, int(on_last.sum()))
        return alert, suspect

    def _hit(self, splits, i, j, z, level, sigma, n_cand) -> Hit:
        s = int(splits[i])
        t = s + int(j)
        return Hit(s=s, t=t, z=float(z[i, j]), n_candidates=n_cand, before=float(level[i]),
                   after=float(np.median(self.g[s : t + 1])), sigma=float(sigma[i]))

    def run(self, with_suspect: bool = True) -> tuple[list[Hit], Hit | None]:
        alerts: list[Hit] = []
        c, t_last = 0, -1
        last = len(self.g) - 1
        suspect = None
        while True:
            alert, suspect = self.scan_regime(c, t_last, suspect_at=last if with_suspect else None)
            if alert is None:
                break
            alerts.append(alert)
            closed = self.g[c : alert.s]
            self.hist_resid[c : alert.s] = closed - np.median(closed)
            c, t_last = alert.s, alert.t
        return alerts, suspect
