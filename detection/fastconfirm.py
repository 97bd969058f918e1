"""Two-build confirmation: a step is confirmed on the build after it (or by re-measuring it), never
on one run.

Why the change-point engine (``online.py``) is slow on a step: with one run per build, two builds
after a step of ``d`` sd give a mean shift whose z is ``d * sqrt(2)`` (4.24 at 3 sd); the engine's bar
is the Student-t quantile at the normal tail of 4.2 (4.5-4.6 with a long history, more with a short
one or heavy tails), so a 3-sd step passes on its second build only when both runs happen to land
past it: about a third of the time (``bench/recall_benchmark.py``). No rule on one run per build can
do much better: even with the noise sd known and Gaussian, a test on the mean of two builds that
catches 90 % of 3-sd steps (bar 2.09 sd) fires on 1.5 of 1,000 unchanged builds per direction.
What the product has beside one run per build is the re-measurement of a suspect build: a second,
independent run of it (another evening, another host of the class) doubles the evidence without
waiting, and a machine that was busy for an evening (an outlier burst) does not repeat on the re-run.
Two re-runs, not one: on two runs of a build a heavy-tailed noise passes the bar about as often as
both runs land in its tail (p squared); on three, p cubed. So a suspect is run twice more, the second
time only where the first re-run is off the same way too (otherwise no alert can start there), and
an alert on its own build stands on three runs (the tuning shapes, seeds 11 and 12, with the
engine's gated alerts: 82.0 % of 3-sd steps within two builds at 1.10 FP per 1,000 with one re-run
and bar 3.6; with two, 91.8 % at 0.84 at bar 3.6 and 89.9 % at 0.58 at 3.8, the bar kept).

The rule, per new build ``t`` of a series (``g``: log values signed so that larger is better), in the
current regime (restarted at each alert's first bad build):

1. Baseline: up to ``window`` build levels (the mean of each build's runs) of the regime before the
   candidate start ``s`` (``t`` itself, or ``t - 1``); at least ``min_before``. Its level is the
   median; its scale a robust sd: the largest of 1.4826 x MAD, the 90th percentile of the absolute
   residuals over 1.645 and their 95th over 1.96 (heavy tails and two-level machines widen it where a MAD would not), widened
   by ``1 + small_n / n`` for a short baseline. From ``long_n`` (20) builds on, the level is the
   20 %-trimmed mean and the core is the RMS (clipped at ``clip`` MAD) where the MAD scale is over
   ``two_level`` (1.3) x it: on a two-level machine the median lands anywhere in the gap and the MAD
   reads the spread ~1.44x wide (bench/results/recall-benchmark-2026-11-28c.txt); the bar is then
   ``long_bar`` (3.9).
2. Suspect: build ``t``'s run is at least ``suspect_z`` scale off. With ``remeasure`` given, the
   build is run again up to ``reruns`` (2) times, the next only while each re-run is off the first
   run's way by ``run_min`` scale; all its runs count.
3. Alert, first bad build ``s``: every build of ``s..t`` is off the same way by at least
   ``point_min`` scale (so a single-build spike never alerts, however large), and every run of them
   by at least ``run_min``; and the mean of all their runs (each clipped at ``clip`` scale) is off by at least ``bar`` standard errors
   (scale x sqrt((1 + rho (builds - 1)) / runs + 1.45/n): ``rho`` the baseline's lag-1 autocorrelation,
   the second term for the baseline median's own error). ``s = t``
   needs a re-measured build (``1 + reruns`` runs); ``s = t - 1`` is the two-build confirmation.

Pure numpy; no Django. ``fast_alerts(values, direction=..., remeasure=...)`` returns the alerts as
``ChangePoint`` (state 'alert') in the order they were raised, and how many builds were re-measured
(the benchmark's form: one run per build, re-runs drawn on demand). ``fast_replay(runs, ...)`` takes
every stored run of each build (the dashboard's form: ``dashboard/regressions/two_build.py``) and
also returns the builds that were suspects with nobody to re-run them, which the dashboard queues for
re-measurement. Measured: bench/results/recall-benchmark-2026-11-28.txt (docs/detection.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .noise import MAD_TO_SD
from .online import MEDIAN_VAR, confidence
from .types import ChangePoint, direction_sign


@dataclass(frozen=True)
class FastConfig:
    """Settings of the two-build confirmation (tuned on bench/recall_benchmark.py --tune, see there)."""

    min_before: int = 8
    window: int = 60
    suspect_z: float = 1.75
    point_min: float = 1.0
    run_min: float = 1.0
    clip: float = 3.0  # a clip below bar x its standard error on two runs (2.5: z at most 3.5) would stop the two-build confirmation
    bar: float = 3.8  # standard errors (3.6 with one re-run)
    max_rho: float = 0.8
    small_n: float = 4.0
    min_scale: float = 0.002  # a series that never moved (memory, to the byte) is taken to move by 0.2 %
    reruns: int = 2  # re-runs of a suspect: it alerts on its own build on 1 + reruns runs (the second only where the first is off too)
    long_n: int = 20  # from this many baseline builds on: a trimmed-mean level and the two-level check of the scale
    trim: float = 0.2  # of each end of a long baseline, for its level (a median falls anywhere in a two-level machine's gap)
    two_level: float = 1.3  # the MAD scale over this x the baseline's RMS (clipped at clip x MAD): two levels, the RMS is the core
    long_bar: float = 3.9  # the bar on a long baseline (``long_n`` builds or more), whose scale the two-level check can narrow


def _lag1(resid: np.ndarray, max_rho: float) -> float:
    """Lag-1 autocorrelation of a baseline's residuals (0 below 20 points), clipped to [0, max_rho]."""
    if resid.size < 20:
        return 0.0
    e = resid - resid.mean()
    energy = float(np.sum(e * e))
    return float(np.clip(np.sum(e[1:] * e[:-1]) / energy, 0.0, max_rho)) if energy > 0 else 0.0


def _quantiles(sorted_a: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    """``np.quantile(a, q)`` (linear) of an already sorted array, for each ``q``, without re-sorting."""
    last = sorted_a.size - 1
    out = []
    for q in qs:
        pos = last * q
        lo = int(pos)
        hi = min(lo + 1, last)
        out.append(float(sorted_a[lo] + (sorted_a[hi] - sorted_a[lo]) * (pos - lo)))
    return out


def _level(base: np.ndarray, cfg: FastConfig) -> float:
    """A baseline's level: its median, or from ``long_n`` builds on its ``trim``-trimmed mean (on a
    two-level machine the median lands anywhere in the gap between the levels, the trimmed mean midway)."""
    if base.size < cfg.long_n:
        return float(np.median(base))
    b = np.sort(base)
    k = int(cfg.trim * b.size)
    return float(b[k : b.size - k].mean())


def _scale(resid: np.ndarray, small_n: float, min_scale: float, cfg: FastConfig | None = None) -> float:
    a = np.sort(np.abs(resid))
    median, q90, q95 = _quantiles(a, (0.5, 0.9, 0.95))
    core = MAD_TO_SD * median
    if cfg is not None and a.size >= cfg.long_n and core > 0:
        rms = float(np.sqrt(np.mean(np.minimum(a, cfg.clip * core) ** 2)))
        if core > cfg.two_level * rms:  # few residuals near the level (two levels): the MAD reads the spread too wide
            core = rms
    tail = max(q90 / 1.6449, q95 / 1.96) if a.size >= 10 else core
    return max(core, tail, min_scale) * (1.0 + small_n / a.size)


def _remeasure(logs: list[float], i: int, remeasure: Callable[[int], float], *, sign: float, floor: float, bar: float,
               reruns: int) -> bool:
    """Re-run suspect build ``i`` (its signed log runs ``logs``, one so far) up to ``reruns`` times, the
    next only while every re-run is off ``floor`` the first run's way by ``bar`` (one that is not already
    rules out an alert starting there). Whether any re-run came."""
    way = math.copysign(1.0, logs[0] - floor)
    for _ in range(reruns):
        new = remeasure(i)
        if new is None or not math.isfinite(new) or new <= 0:
            break
        logs.append(sign * math.log(new))
        if way * (logs[-1] - floor) < bar:
            break
    return len(logs) > 1


def fast_alerts(
    values,
    *,
    direction: str,
    remeasure: Callable[[int], float] | None = None,
    config: FastConfig = FastConfig(),
) -> tuple[list[ChangePoint], int]:
    """Alerts of the two-build confirmation replayed build by build, and the builds re-measured.

    ``values``: one run per build (positive numbers; None/NaN are skipped). ``remeasure(i)``: a new
    run of build ``i`` (the product's re-measurement of a suspect), or None: two builds decide.
    """
    runs = [[] if v is None else [v] for v in values]
    replay = fast_replay(runs, direction=direction, remeasure=remeasure, config=config)
    return replay.alerts, replay.remeasured


@dataclass(frozen=True)
class FastReplay:
    """What ``fast_replay`` found: the alerts in the order raised, the builds re-measured through
    ``remeasure``, and the builds (indices) that were suspects with one run and nobody to re-run them
    (``remeasure`` None): the product queues a re-measurement of such a build when it is the newest."""

    alerts: list[ChangePoint]
    remeasured: int
    suspects: list[int]
    noise: float | None  # the newest build's baseline scale (relative sd), None before ``min_before`` builds
    level: float | None = None  # the newest build's baseline level (the metric's units), None likewise


def fast_replay(
    runs,
    *,
    direction: str,
    remeasure: Callable[[int], float] | None = None,
    config: FastConfig = FastConfig(),
) -> FastReplay:
    """The two-build confirmation replayed build by build over ``runs``: per build, the values of its
    runs as stored (the nightly run, then any re-measurement of it; an empty list or None: no value).
    A build with two or more runs is judged on all of them from its own build on (a re-measurement
    joins its build's point before the next build comes)."""
    sign = direction_sign(direction)
    cleaned = [[float(x) for x in (build or []) if x is not None and math.isfinite(float(x)) and float(x) > 0] for build in runs]
    index = [i for i, build in enumerate(cleaned) if build]
    logs: list[list[float]] = [[sign * math.log(x) for x in cleaned[i]] for i in index]
    cfg = config
    alerts: list[ChangePoint] = []
    suspects: list[int] = []
    remeasured = 0
    c = 0  # first build of the current regime (positions into ``index``)
    levels = np.empty(len(index))
    stats: dict[tuple[int, int], tuple[float, float, float, int]] = {}  # (regime start, s): the baseline before s
    noise = newest_level = None
    for t in range(len(index)):
        levels[t] = float(np.mean(logs[t]))
        hit = None
        for s in (t, t - 1):
            if s - c < cfg.min_before:
                continue
            if (c, s) not in stats:
                base = levels[max(c, s - cfg.window) : s]
                level = _level(base, cfg)
                stats[(c, s)] = (level, _scale(base - level, cfg.small_n, cfg.min_scale, cfg),
                                 _lag1(base - level, cfg.max_rho), base.size)
            level, scale, rho, n = stats[(c, s)]
            if s == t:
                noise, newest_level = scale, math.exp(sign * level)
            if s == t and len(logs[t]) == 1 and abs(logs[t][0] - level) >= cfg.suspect_z * scale:
                if remeasure is None:
                    suspects.append(int(index[t]))  # the product queues its re-measurement
                elif _remeasure(logs[t], int(index[t]), remeasure, sign=sign, floor=level, bar=cfg.run_min * scale,
                                reruns=cfg.reruns):
                    levels[t] = float(np.mean(logs[t]))
                    remeasured += 1
            if s == t and len(logs[t]) < 1 + cfg.reruns:
                continue
            build_dev = levels[s : t + 1] - level
            direction_of = math.copysign(1.0, build_dev[-1])
            if np.any(direction_of * build_dev < cfg.point_min * scale):
                continue
            every = np.concatenate([np.asarray(logs[i]) for i in range(s, t + 1)]) - level
            if np.any(direction_of * every < cfg.run_min * scale):
                continue
            every = np.clip(every, -cfg.clip * scale, cfg.clip * scale)  # one wild run counts as large, not huge
            # consecutive builds of an autocorrelated series share part of their noise (a re-run does not)
            z = float(every.mean()) / (scale * math.sqrt((1.0 + rho * (t - s)) / every.size + MEDIAN_VAR / n))
            if abs(z) >= (cfg.long_bar if n >= cfg.long_n else cfg.bar):
                hit = (s, z, level, float(np.median(levels[s : t + 1])), scale)
                break
        if hit is None:
            continue
        s, z, level, after, scale = hit
        before_v, after_v = math.exp(sign * level), math.exp(sign * after)
        rel = after_v / before_v - 1.0
        alerts.append(ChangePoint(
            first_bad=int(index[s]), last_good=int(index[s - 1]) if s > 0 else None, raised_at=int(index[t]),
            kind="improvement" if z > 0 else "regression", relative_change=rel, magnitude=sign * rel,
            before=before_v, after=after_v, z=z, confidence=confidence(z, 2), state="alert", noise=scale,
        ))
        c = s
        noise = newest_level = None
    return FastReplay(alerts=alerts, remeasured=remeasured, suspects=suspects, noise=noise, level=newest_level)
