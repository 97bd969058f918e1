"""Re-implementations of the anchors, each replayed online (one build at a time).

Each function takes the values of one series and returns ``[(first_bad, raised_at), ...]``: the
alerts as the method would have raised them while builds arrived, never retracted (a change point
that a later build moves or removes stays counted; Otava's retracted ones are counted separately).

- ``perfherder``: Treeherder's ``detect_changes`` (perfalert): back window of 12 to 24 points
  (widened while no regression was seen), fore window of 12, Student's t of the linearly weighted
  window means, |t| > 7, a change point where t is a local maximum. One value per build (Perfherder
  counts replicates into its windows; our series give it one value per build). Its 2% magnitude
  filter on the alert is left out (it can only lower recall here).
- ``hud``: PyTorch HUD's compiler rule: a build is flagged when it and the build before are both 5%
  worse than the median of the 10 builds before them (applied to both directions here, so
  improvements count as found too); after an alert the baseline restarts at the first flagged build.
- ``otava``: Apache Otava's ``compute_change_points`` (the Hunter paper): e-divisive means over
  sliding windows of 50 (step 25) with a two-sided Student t-test as the significance test, weak
  change points at p < 0.01, merged at p < 0.001. Exact (not approximated); windows are memoised
  across the prefixes of a series, which changes nothing in the result.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import ttest_ind_from_stats


# -- Perfherder ---------------------------------------------------------------------------------
def _weighted_avg(values: list[float]) -> float:
    n = len(values)
    w = [(n - i) / n for i in range(n)]
    return sum(v * wi for v, wi in zip(values, w)) / sum(w)


def _var(values: list[float], avg: float) -> float:
    n = len(values)
    return sum((v - avg) ** 2 for v in values) / (n - 1) if n > 1 else 0.0


def _calc_t(w1: list[float], w2: list[float]) -> float:
    if not w1 or not w2:
        return 0.0
    a1, a2 = _weighted_avg(w1), _weighted_avg(w2)
    delta = a2 - a1
    if delta == 0:
        return 0.0
    v1, v2 = _var(w1, a1), _var(w2, a2)
    if v1 == 0 and v2 == 0:
        return math.inf
    return delta / ((v1 / len(w1)) + (v2 / len(w2))) ** 0.5


def perfherder(values, min_back_window=12, max_back_window=24, fore_window=12, t_threshold=7.0):
    """detect_changes replayed online. Index i can first be flagged at the prefix whose length is
    i + 12 (its fore window is then full); its right neighbour then has 11 fore points, and from the
    next build on its final t. The t of every index whose fore window is full never changes as the
    series grows (nor does the back-window state before it), so one pass gives them all."""
    x = [float(v) for v in values]
    n = len(x)
    t_full = [0.0] * n
    n_back = [0] * n
    limit_at = [0] * n
    last_seen = 0
    def back(i, limit):
        jw, j = [], i - 1
        while len(jw) < max_back_window and j >= 0 and (i - j) <= limit:
            jw.append(x[j])
            j -= 1
        return jw
    for i in range(1, n):
        limit_at[i] = min(max(last_seen, min_back_window), max_back_window)
        jw = back(i, limit_at[i])
        n_back[i] = len(jw)
        t_full[i] = abs(_calc_t(jw, x[i : i + fore_window]))
        last_seen = 0 if t_full[i] > t_threshold else last_seen + 1
    alerts = []
    for i in range(1, n - fore_window + 1):
        if n_back[i] < min_back_window or t_full[i] <= t_threshold or t_full[i - 1] > t_full[i]:
            continue
        L = i + fore_window  # prefix length at which i is first judged
        t_next = abs(_calc_t(back(i + 1, limit_at[i + 1]), x[i + 1 : L])) if i + 1 < n else 0.0
        if t_next <= t_full[i]:
            alerts.append((i, L - 1))
        elif L < n and t_full[i + 1] <= t_full[i]:
            alerts.append((i, L))
    return alerts


# -- HUD --------------------------------------------------------------------------------------------
def hud(values, threshold=0.05, baseline_points=10, consecutive=2):
    x = np.asarray(values, dtype=float)
    alerts = []
    start = 0
    for t in range(len(x)):
        first = t - consecutive + 1
        if first - start < baseline_points:
            continue
        base = float(np.median(x[first - baseline_points : first]))
        rel = x[first : t + 1] / base - 1.0
        if np.all(rel >= threshold) or np.all(rel <= -threshold):
            alerts.append((first, t))
            start = first
    return alerts


# -- Otava -----------------------------------------------------------------------------------------
def _qhat_candidate(series: np.ndarray):
    """E-divisive candidate of one interval: the split tau of the (tau, kappa) maximising Q-hat
    (Otava's PairDistanceCalculator, power 1), from 2D prefix sums of the pairwise distances."""
    n = len(series)
    if n < 2:
        return None
    d = np.abs(series[:, None] - series[None, :])
    P = np.zeros((n + 1, n + 1))
    P[1:, 1:] = np.cumsum(np.cumsum(d, axis=0), axis=1)
    tau, kappa = np.meshgrid(np.arange(1, n), np.arange(2, n + 1), indexing="ij")
    ok = kappa > tau
    nl = tau.astype(float)
    nr = (kappa - tau).astype(float)
    between = P[tau, kappa] - P[tau, tau]
    within_l = P[tau, tau] / 2.0
    within_r = (P[kappa, kappa] - P[tau, kappa] - P[kappa, tau] + P[tau, tau]) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = 2.0 / (nl + nr) * between
        q = q - np.where(nl > 1, 2.0 * nr / (nl + nr) / np.maximum(nl - 1, 1) * within_l, 0.0)
        q = q - np.where(nr > 1, 2.0 * nl / (nl + nr) / np.maximum(nr - 1, 1) * within_r, 0.0)
    q = np.where(ok, q, -np.inf)
    i, j = np.unravel_index(int(np.argmax(q)), q.shape)
    return int(tau[i, j]), float(q[i, j])


def _ttest_p(left: np.ndarray, right: np.ndarray) -> float:
    if len(left) + len(right) - 2 <= 0:
        return 1.0
    sl = float(np.std(left)) if len(left) >= 2 else 0.0
    sr = float(np.std(right)) if len(right) >= 2 else 0.0
    if sl == 0 and sr == 0:
        return 0.0 if float(np.mean(left)) != float(np.mean(right)) else 1.0
    _, p = ttest_ind_from_stats(float(np.mean(left)), sl, len(left), float(np.mean(right)), sr, len(right))
    return float(p) if math.isfinite(p) else 1.0


def _intervals(cps: list[int], n: int) -> list[tuple[int, int]]:
    bounds = [0] + cps + [n]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] != bounds[i + 1]]


def _edivisive_window(window: np.ndarray, max_pvalue: float) -> list[int]:
    cps: list[int] = []
    cache: dict = {}
    n = len(window)
    while True:
        best = None
        for a, b in _intervals(cps, n):
            if b - a < 2:
                continue
            if (a, b) not in cache:
                c = _qhat_candidate(window[a:b])
                cache[(a, b)] = None if c is None else (c[0] + a, c[1])
            c = cache[(a, b)]
            if c is not None and (best is None or c[1] > best[1]):
                best = (c[0], c[1], a, b)
        if best is None:
            return cps
        tau, _, a, b = best
        if _ttest_p(window[a:tau], window[tau:b]) <= max_pvalue:
            cps = sorted(cps + [tau])
        else:
            return cps


def _merge(cps: list[int], series: np.ndarray, max_pvalue: float) -> list[int]:
    cps = list(cps)
    n = len(series)
    def stats(k):
        bounds = [0] + cps + [n]
        left = series[bounds[k] : bounds[k + 1]]
        right = series[bounds[k + 1] : bounds[k + 2]]
        return _ttest_p(left, right)
    while cps:
        ps = [stats(k) for k in range(len(cps))]
        k = int(np.argmax(ps))
        if ps[k] < max_pvalue:
            return cps  # min_magnitude 0: every remaining change point is kept
        del cps[k]
    return cps


def otava_change_points(series: np.ndarray, memo: dict, window_len=50, max_pvalue=0.001) -> list[int]:
    first_pass = max_pvalue * 10
    step = window_len // 2
    n = len(series)
    weak: list[int] = []
    start = 0
    while start < n:
        end = min(start + window_len, n)
        key = (start, end)
        if key not in memo:
            memo[key] = [c + start for c in _edivisive_window(series[start:end], first_pass)]
        new = memo[key]
        last = new[-1] if new else 0
        start = max(last, start + step)
        for c in new:
            if c not in weak:
                weak.append(c)
    weak.sort()
    return _merge(weak, series, max_pvalue)


def otava(values, window_len=50, max_pvalue=0.001, margin=5):
    """Otava replayed online: change points of each prefix; an alert when a change point appears
    that is not within ``margin`` of an earlier alert. Returns (alerts, retracted): retracted are
    alerts whose change point is absent (no change point within ``margin``) from the final result."""
    x = np.asarray(values, dtype=float)
    memo: dict = {}
    alerts: list[tuple[int, int]] = []
    for L in range(3, len(x) + 1):
        for c in otava_change_points(x[:L], memo, window_len, max_pvalue):
            if all(abs(c - a) > margin for a, _ in alerts):
                alerts.append((c, L - 1))
    final = otava_change_points(x, memo, window_len, max_pvalue)
    retracted = [a for a in alerts if all(abs(a[0] - c) > margin for c in final)]
    return alerts, retracted
