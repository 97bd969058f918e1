"""Labeled series for the detection benchmark (bench/detection_anchors.py).

Every series has 200 builds. Values are ``base * exp(level + noise)``: ``level`` is piecewise
constant (the planted steps, in log space, a step of +5% adds log(1.05)), ``noise`` is drawn from one
of five families, each scaled so that its standard deviation is ``sigma`` (drawn log-uniformly in
[0.3%, 3%] per series; the anchors' bar in the issue used 2%):

- ``gaussian``: independent normal noise;
- ``heavy``: Student's t with 3 degrees of freedom (scaled to sd ``sigma``: a few builds per series
  land 3-6 sd off);
- ``autocorr``: AR(1) with lag-1 correlation uniform in [0.3, 0.6] (machine drift), marginal sd
  ``sigma``;
- ``bimodal``: two machine states, the slow one 2.5 within-state sd away, taken by 20-40% of the
  builds independently (total sd ``sigma``);
- ``outliers``: normal noise plus single outliers on 1.5% of the builds, 4 to 15 sd off, either way.

A fraction of the series (``noise_fraction``, 40% by default) is pure noise: every alert on it is
false, and they give the false alerts per 1,000 builds. The others carry 1 to 3 steps of 2, 3, 5 or
10% in either direction at random positions in [30, 175), at least 30 builds apart, so each step has
a clean before window and 25 builds after it. A step's size in noise sd is ``|log(1 + step)| / sigma``.
The direction of the metric (higher or lower is better) is drawn per series; it only names the kind.

``gpu_series`` draws series whose noise is calibrated on the H100 run documents in bench/results: see
its docstring.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FAMILIES = ("gaussian", "heavy", "autocorr", "bimodal", "outliers")
STEP_SIZES = (0.02, 0.03, 0.05, 0.10)
LENGTH = 200
RESULTS = Path(__file__).resolve().parents[1] / "results"


@dataclass
class Series:
    id: str
    family: str
    sigma: float  # build-to-build noise sd (log units)
    values: np.ndarray
    direction: str
    changes: list[int] = field(default_factory=list)  # first index of each new level
    steps: list[float] = field(default_factory=list)  # relative step at each change
    samples: list[list[float]] | None = None

    @property
    def sizes_in_sd(self) -> list[float]:
        return [abs(math.log1p(s)) / self.sigma for s in self.steps]


def noise(rng: np.random.Generator, family: str, sigma: float, n: int) -> np.ndarray:
    if family == "gaussian":
        return rng.normal(0.0, sigma, n)
    if family == "heavy":
        return rng.standard_t(3, n) * sigma / math.sqrt(3.0)  # t3 has variance 3
    if family == "autocorr":
        rho = rng.uniform(0.3, 0.6)
        e = rng.normal(0.0, sigma * math.sqrt(1 - rho * rho), n)
        x = np.empty(n)
        x[0] = rng.normal(0.0, sigma)
        for i in range(1, n):
            x[i] = rho * x[i - 1] + e[i]
        return x
    if family == "bimodal":
        p = rng.uniform(0.2, 0.4)
        gap = 2.5
        within = sigma / math.sqrt(1 + p * (1 - p) * gap * gap)
        state = rng.random(n) < p
        return rng.normal(0.0, within, n) + state * gap * within - p * gap * within
    if family == "outliers":
        x = rng.normal(0.0, sigma, n)
        hit = rng.random(n) < 0.015
        size = rng.uniform(4.0, 15.0, n) * sigma * rng.choice([-1.0, 1.0], n)
        return np.where(hit, x + size, x)
    raise ValueError(family)


def synthetic(count: int, seed: int, noise_fraction: float = 0.4, length: int = LENGTH) -> list[Series]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        family = FAMILIES[k % len(FAMILIES)]
        sigma = math.exp(rng.uniform(math.log(0.003), math.log(0.03)))
        level, changes, steps = _planted_steps(rng, length, noise_fraction)
        values = float(rng.uniform(0.5, 20.0)) * np.exp(level + noise(rng, family, sigma, length))
        direction = "higher_is_better" if rng.random() < 0.5 else "lower_is_better"
        out.append(Series(f"{family}-{k}", family, sigma, values, direction, changes, steps))
    return out


def _h100_cases() -> list[dict]:
    """Per case of the H100 runs: per-block log speedups (centred) and the run-to-run difference."""
    docs = sorted(RESULTS.glob("h100-*.json"))
    runs = [json.loads(p.read_text()) for p in docs]
    def key(r):
        c = r["config"]
        return (r["workload"], c["compile_mode"], c["shape_regime"], c["dtype"])
    by_key: dict = {}
    for doc in runs:
        for r in doc["results"]:
            s = r.get("samples") or {}
            speedup = (r.get("metrics") or {}).get("speedup")
            if r.get("status") != "pass" or not s.get("eager_ms") or not speedup:
                continue
            ratios = np.log(np.asarray(s["eager_ms"]) / np.asarray(s["compiled_ms"]))
            by_key.setdefault(key(r), []).append((speedup, ratios - np.median(ratios)))
    cases = []
    for k, entries in by_key.items():
        diff = abs(math.log(entries[1][0] / entries[0][0])) if len(entries) > 1 else None
        cases.append({"key": "/".join(k[:3]), "residuals": entries[0][1], "rerun_diff": diff})
    return cases


def gpu_series(count: int, seed: int, noise_fraction: float = 0.4, length: int = LENGTH) -> list[Series]:
    """Speedup series with the noise of the H100 runs in bench/results.

    Each series copies one measured case: its replicate samples are per-block speedups drawn (with
    replacement) from that case's measured per-block log ratios, so the within-run noise and its
    outliers are the measured ones; the point value is their median (as the runner's median over
    median). Between runs the level moves by run-to-run noise: normal with sd drawn from the
    measured run-to-run differences of the cases that ran twice (|d|/sqrt(2): median 0.11%, max
    1.3% as a difference), so a run's samples understate the between-build noise as they do on the
    real machine. Steps as in ``synthetic``. ``sigma`` is the total build-to-build sd.
    """
    rng = np.random.default_rng(seed)
    cases = _h100_cases()
    diffs = np.asarray([c["rerun_diff"] for c in cases if c["rerun_diff"] is not None])
    run_sds = diffs / math.sqrt(2.0)
    out = []
    for k in range(count):
        case = cases[k % len(cases)]
        res = case["residuals"]
        run_sd = max(float(rng.choice(run_sds)), 2e-4)
        blocks = len(res)
        level, changes, steps = _planted_steps(rng, length, noise_fraction)
        run_noise = rng.normal(0.0, run_sd, length)
        picks = rng.integers(0, blocks, size=(length, blocks))
        sample_logs = res[picks] + (level + run_noise)[:, None]
        point = np.median(sample_logs, axis=1)
        base = 1.2
        values = base * np.exp(point)
        samples = (base * np.exp(sample_logs)).tolist()
        # total build-to-build sd: run noise plus the spread of a median of the blocks
        within = float(np.std(np.median(res[rng.integers(0, blocks, size=(400, blocks))], axis=1)))
        sigma = math.sqrt(run_sd**2 + within**2)
        out.append(Series(f"gpu-{case['key']}-{k}", "h100", sigma, values, "higher_is_better", changes, steps, samples))
    return out


def _planted_steps(rng, length: int, noise_fraction: float) -> tuple[np.ndarray, list[int], list[float]]:
    """The log level of a series (0 until its first step), its change positions and step sizes: none
    with probability ``noise_fraction``, else 1-3 steps at least 30 builds apart."""
    level = np.zeros(length)
    changes, steps = [], []
    if rng.random() >= noise_fraction:
        n_steps = int(rng.integers(1, 4))
        while len(changes) < n_steps:
            pos = int(rng.integers(30, length - 25))
            if all(abs(pos - c) >= 30 for c in changes):
                changes.append(pos)
        changes.sort()
        for c in changes:
            step = float(rng.choice(STEP_SIZES)) * float(rng.choice([-1.0, 1.0]))
            steps.append(step)
            level[c:] += math.log1p(step)
    return level, changes, steps


# Held-out shapes of bench/recall_benchmark.py --holdout (issue #42, 2026-11-28c): noise shapes that are
# neither the tuning families above nor the recall benchmark's evaluation shapes, fixed before any rule
# ran on them, never tuned on. Each returns ``n`` draws in its own units; the benchmark scales every shape
# to a unit sd measured over 200,000 draws, as it does its evaluation shapes.
HOLDOUT_SHAPES = ("skew_normal", "laplace", "rare_slow", "trend", "lognormal")
HOLDOUT_SEED = 7373


def holdout_noise(rng: np.random.Generator, shape: str, n: int) -> np.ndarray:
    """- ``skew_normal``: skew-normal with shape 6 (most builds near, a one-sided tail), its side drawn per series;
    - ``laplace``: double exponential (a sharp peak, exponential tails both ways);
    - ``rare_slow``: normal noise plus a slow mode on 6 % of the builds, 4 within-sd slower (a host that now
      and then runs throttled), one-sided;
    - ``trend``: a straight drift whose slope is drawn per series (up to 1.5 noise sd over the series, either
      way; a slowly filling disk, a warming room) plus white noise;
    - ``lognormal``: exp(N(0, 0.6)) centred, its side drawn per series (a right-skewed timer)."""
    side = 1.0 if rng.random() < 0.5 else -1.0
    if shape == "skew_normal":
        alpha = 6.0
        delta = alpha / math.sqrt(1 + alpha * alpha)
        u0, v = rng.standard_normal(n), rng.standard_normal(n)
        return side * (delta * (np.abs(u0) - math.sqrt(2 / math.pi)) + math.sqrt(1 - delta * delta) * v)  # centred
    if shape == "laplace":
        return rng.laplace(0.0, 1.0, n)
    if shape == "rare_slow":
        return rng.standard_normal(n) - 4.0 * (rng.random(n) < 0.06)
    if shape == "trend":
        return rng.uniform(-1.5, 1.5) * (np.arange(n) / n - 0.5) + rng.standard_normal(n)
    if shape == "lognormal":
        return side * (np.exp(0.6 * rng.standard_normal(n)) - math.exp(0.18))
    raise ValueError(shape)
