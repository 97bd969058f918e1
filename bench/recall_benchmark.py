"""Recall and false alarms of the detectors on noise shapes they were not tuned on (issue #42).

    python -m bench.recall_benchmark                      # 6 shapes x 300 series per kind, seed 4242
    python -m bench.recall_benchmark --series 100 --seed 7 --rules re-measured
    python -m bench.recall_benchmark --tune --seed 12     # the TUNING shapes (never reported as the result)
    python -m bench.recall_benchmark --holdout            # the HELD-OUT shapes (seed 7373), never tuned on

Rules (``--rules``): ``engine``, the change-point engine (``detection.replay_online``); ``two-build``,
the two-build confirmation (``detection.fastconfirm``) on one run per build; ``re-measured``, the same
where a suspect build (1.75 robust sd off) is run again, and a second time where the first re-run
agrees (``FastConfig.reruns``), as the product's re-measurement does: each re-run is an independent
draw of the same shape at the same build, from a stream of its own (another evening on the class's
machines; for outlier bursts the busy evening does not repeat); ``combined``, the alerts of
``re-measured`` and ``engine`` together (one alert per change: within 2 builds of one already
raised is the same): what the dashboard's detection runs since the rule was wired in
(dashboard/regressions/two_build.py; the floor rule beside them acts only on short histories and is
not modelled here); ``gated``, the same union where each of the engine's alerts is held until the
newest build it was raised on is run again (the same re-run draw as the rule's) and stands only if
that re-run is off the alert's way by ``--gate-min`` (default: the rule's ``run_min``, 1) x the
engine's noise sd from the alert's before level and by ``--gate-nearer`` (0.5) of the alert's shift
(nearer its after level than its before one: a 1-sd bar alone passes 16 % of normal re-runs): an
evening's outlier burst does not repeat on the re-run (the gate reads the median of a build's re-runs, as
the dashboard's does). ``re-runs/1k``: builds re-measured per 1,000 unchanged builds (a build counts once);
``runs/1k``: re-run runs per 1,000 unchanged builds (the cost).
Figures with their commands: bench/results/recall-benchmark-2026-11-28.txt and -28b.txt (docs/detection.md).
The two-build confirmation was tuned with ``--tune`` (bench/lib/detection_series.py's shapes: Gaussian,
t3, AR(1), two-state, single outliers; seeds 11 and 12) and is reported on the shapes below with
seed 4242.

The detector (``detection.replay_online``, the change-point half of what the dashboard runs) was
tuned on bench/lib/detection_series.py (Gaussian, AR(1), Student-t 4, occasional single outliers,
two-state machines). The shapes here are others, each scaled to a unit standard deviation (measured
on 200,000 draws) and then to the series' noise sd (log-uniform 0.5-3 %, relative):

- ``heavy_tail``: Student-t with 2.5 degrees of freedom (finite variance, far heavier than t4);
- ``bimodal``: every build lands on one of two levels 2.5 sd apart at random (a host with two speeds), plus a little noise;
- ``drift``: a random walk slow enough that 150 builds wander about one sd, plus white noise;
- ``heteroscedastic``: the sd itself changes in blocks of 20 builds (x 0.4 to x 2.2);
- ``outlier_bursts``: white noise with bursts of 2-4 consecutive builds 4-8 sd off (a busy machine for an evening);
- ``quantised``: white noise rounded to a grid of 0.8 sd (a timer's resolution, a count of milliseconds).

Each series has 150 builds. Pure-noise series give the false positives: every alert, per 1,000
builds (after the 8 builds the detector needs). Step series get one step of 1.5 or 3 noise sds
(the shape's sd), worse for the metric, at a random build in 40-130; it counts as caught within two
builds when an alert whose first bad build is within 2 builds of the step is raised on the step's
first or second build (delay <= 2), and as caught at all when it is raised by the end of the series.
Target (issue #42): 90 % of 3-sd steps within two builds at no more than 1 false positive per 1,000
builds.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from bench.lib import detection_series
from detection import replay_online
from detection.fastconfirm import FastConfig, fast_alerts

BUILDS = 150
MARGIN = 2  # builds between the planted step and the alert's first bad build
RULES = ("engine", "two-build", "re-measured", "combined", "gated")
GATE_MIN = FastConfig().run_min  # a re-run must be this many of the engine's noise sd off the same way
GATE_NEARER = 0.5  # ... and this fraction of the alert's shift: nearer its after level than its before one
SHAPES = ("heavy_tail", "bimodal", "drift", "heteroscedastic", "outlier_bursts", "quantised")


def _raw(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of a shape's noise, in its own units (scaled to unit sd by ``noise``)."""
    if shape == "heavy_tail":
        return rng.standard_t(2.5, n)
    if shape == "bimodal":
        return np.where(rng.random(n) < 0.5, -1.25, 1.25) + 0.3 * rng.standard_normal(n)
    if shape == "drift":
        return np.cumsum(rng.standard_normal(n)) / math.sqrt(BUILDS) + rng.standard_normal(n)
    if shape == "heteroscedastic":
        scale = np.repeat(rng.uniform(0.4, 2.2, n // 20 + 1), 20)[:n]
        return scale * rng.standard_normal(n)
    if shape == "outlier_bursts":
        out = rng.standard_normal(n)
        i = 0
        while i < n:
            if rng.random() < 0.01:
                length = int(rng.integers(2, 5))
                out[i : i + length] += rng.choice([-1, 1]) * rng.uniform(4, 8)
                i += length
            i += 1
        return out
    if shape == "quantised":
        return np.round(rng.standard_normal(n) / 0.8) * 0.8
    raise ValueError(shape)


def unit_sds(seed: int, holdout: bool = False) -> dict[str, float]:
    """Each shape's sd over 200,000 draws (in series of BUILDS, as generated): the scale of 1 sd."""
    rng = np.random.default_rng(seed)
    if holdout:
        return {shape: float(np.std(np.concatenate([detection_series.holdout_noise(rng, shape, BUILDS)
                                                    for _ in range(200_000 // BUILDS)])))
                for shape in detection_series.HOLDOUT_SHAPES}
    return {shape: float(np.std(np.concatenate([_raw(shape, BUILDS, rng) for _ in range(200_000 // BUILDS)])))
            for shape in SHAPES}


# the tuning shapes: bench/lib/detection_series.py's families, under names of their own (its "bimodal" is not ours)
TUNE_SHAPES = {"gaussian": "gaussian", "t3": "heavy", "ar1": "autocorr", "two_state": "bimodal", "single_outliers": "outliers"}


def _noise(shape: str, unit: float, rng: np.random.Generator) -> np.ndarray:
    """One series of a shape's noise at unit sd (the evaluation shapes, the tuning ones or the held-out ones)."""
    if shape in TUNE_SHAPES:
        return detection_series.noise(rng, TUNE_SHAPES[shape], 1.0, BUILDS)
    if shape in detection_series.HOLDOUT_SHAPES:
        return detection_series.holdout_noise(rng, shape, BUILDS) / unit
    return _raw(shape, BUILDS, rng) / unit


def make_series(shape: str, step_sd: float, unit: float, rng: np.random.Generator, rerun_rng: np.random.Generator,
                rerun2_rng: np.random.Generator) -> tuple[list[float], list[list[float]], int | None]:
    """One series of a speedup-like metric (higher is better), two re-runs of every build (independent
    draws of the same shape, each from a stream of its own: other evenings on the class's machines; the
    second stream leaves the first as it was) and where its step starts (None: none)."""
    sigma = math.exp(rng.uniform(math.log(0.005), math.log(0.03)))
    log_noise = sigma * _noise(shape, unit, rng)
    reruns = [sigma * _noise(shape, unit, rerun_rng), sigma * _noise(shape, unit, rerun2_rng)]
    start = None
    if step_sd:
        start = int(rng.integers(40, 131))
        log_noise[start:] -= step_sd * sigma  # worse: a lower speedup
        for rerun in reruns:
            rerun[start:] -= step_sd * sigma
    return list(np.exp(log_noise)), [list(np.exp(rerun)) for rerun in reruns], start


def _merge(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Both detectors' alerts as one list: an alert whose first bad build is within MARGIN of one
    already raised (earlier or at the same build) is the same change, counted once."""
    kept: list[tuple[int, int]] = []
    for b, r in sorted(first + second, key=lambda a: (a[1], a[0])):
        if not any(abs(b - kb) <= MARGIN for kb, _ in kept):
            kept.append((b, r))
    return kept


def gate_deviation(cp, rerun: float) -> float:
    """How far a re-run of an engine alert's newest build is off the alert's before level, in the
    engine's noise sd, signed so that positive is the alert's own way (worse for a regression)."""
    if not cp.noise or not cp.before or rerun <= 0:
        return 0.0
    return math.copysign(1.0, cp.z) * math.log(rerun / cp.before) / cp.noise


def _gated(engine_devs: list[tuple[int, int, float, float]], gate_min: float, nearer: float = 0.0) -> list[tuple[int, int]]:
    """The engine's alerts that their newest build's re-run confirms: ``gate_min`` sd off the same way
    and, with ``nearer`` 0.5, nearer the alert's after level than its before level (``shift`` sd off)."""
    return [(b, r) for b, r, dev, shift in engine_devs if dev >= max(gate_min, nearer * shift)]


def _judge(args):
    shape, step_sd, values, reruns, start, rules, gate_min, gate_nearer = args
    out = {}
    taken: dict[int, list[float]] = {}  # per build re-measured, its re-runs (the rule's suspects and the gate's)

    def remeasure(i: int) -> float:  # the build's next re-run: the first draw, then the second
        runs = taken.setdefault(i, [])
        runs.append(reruns[len(runs) % len(reruns)][i])
        return runs[-1]

    def cost() -> tuple[int, int]:
        return len(taken), sum(map(len, taken.values()))

    if {"engine", "combined", "gated"} & set(rules):
        cps = replay_online(values, direction="higher_is_better")
        out["engine"] = [(cp.first_bad, cp.raised_at) for cp in cps]
    if "two-build" in rules:
        alerts, _ = fast_alerts(values, direction="higher_is_better")
        out["two-build"] = [(cp.first_bad, cp.raised_at) for cp in alerts]
    if {"re-measured", "combined", "gated"} & set(rules):
        alerts, _ = fast_alerts(values, direction="higher_is_better", remeasure=remeasure)
        out["re-measured"] = [(cp.first_bad, cp.raised_at) for cp in alerts]
    remeasured = {"re-measured": cost(), "combined": cost()}
    if "combined" in rules:
        out["combined"] = _merge(out["re-measured"], out["engine"])
    devs = []
    if "gated" in rules:
        # every engine alert is raised at the newest build of its time: that build is run again (the
        # median of its re-runs, as the dashboard's gate reads them, where the rule re-ran it already)
        devs = [(cp.first_bad, cp.raised_at, gate_deviation(cp, float(np.median(taken.get(cp.raised_at) or [remeasure(cp.raised_at)]))),
                 abs(math.log(cp.after / cp.before)) / cp.noise if cp.noise and cp.before and cp.after else 0.0) for cp in cps]
        out["gated"] = _merge(out["re-measured"], _gated(devs, gate_min, gate_nearer))
        remeasured["gated"] = cost()
    return shape, step_sd, start, {rule: out[rule] for rule in rules}, remeasured, devs


def _table(rule: str, shapes, judged) -> tuple[list[str], dict]:
    rows: dict[str, dict] = {shape: {"fp": 0, "builds": 0, "rerun": 0, "runs": 0, 1.5: [0, 0, 0], 3.0: [0, 0, 0]} for shape in shapes}
    for shape, step_sd, start, by_rule, remeasured, _ in judged:
        alerts = by_rule[rule]
        row = rows[shape]
        if not step_sd:
            row["fp"] += len(alerts)
            row["builds"] += BUILDS - 8
            row["rerun"] += remeasured.get(rule, (0, 0))[0]
            row["runs"] += remeasured.get(rule, (0, 0))[1]
            continue
        hits = [(b, r) for b, r in alerts if abs(b - start) <= MARGIN and r >= start]
        row[step_sd][0] += 1
        row[step_sd][1] += any(r - start + 1 <= 2 for _, r in hits)
        row[step_sd][2] += bool(hits)
    head = (f"{'noise shape':<16} {'FP/1k builds':>12} {'3 sd <=2 builds':>16} {'3 sd by end':>12} "
            f"{'1.5 sd <=2 builds':>18} {'1.5 sd by end':>14} {'re-runs/1k':>11} {'runs/1k':>8}")
    lines = [f"[{rule}]", head, "-" * len(head)]
    total = {"fp": 0, "builds": 0, "rerun": 0, "runs": 0, 1.5: [0, 0, 0], 3.0: [0, 0, 0]}
    for shape in (*shapes, "all"):
        row = total if shape == "all" else rows[shape]
        if shape != "all":
            for k in ("fp", "builds", "rerun", "runs"):
                total[k] += row[k]
            for k in (1.5, 3.0):
                total[k] = [a + b for a, b in zip(total[k], row[k])]
        lines.append(f"{shape:<16} {1000 * row['fp'] / row['builds']:>12.2f} {row[3.0][1] / row[3.0][0]:>16.1%} "
                     f"{row[3.0][2] / row[3.0][0]:>12.1%} {row[1.5][1] / row[1.5][0]:>18.1%} {row[1.5][2] / row[1.5][0]:>14.1%} "
                     f"{1000 * row['rerun'] / row['builds']:>11.1f} {1000 * row['runs'] / row['builds']:>8.1f}")
    return lines, total


def run(series: int, seed: int, workers: int, rules: tuple[str, ...], tune: bool = False, gate_min: float = GATE_MIN,
        gate_nearer: float = GATE_NEARER, holdout: bool = False) -> str:
    shapes = tuple(TUNE_SHAPES) if tune else detection_series.HOLDOUT_SHAPES if holdout else SHAPES
    units = unit_sds(seed + 1, holdout=holdout)
    rng = np.random.default_rng(seed)
    rerun_rng = np.random.default_rng(seed + 7919)
    rerun2_rng = np.random.default_rng(seed + 2 * 7919)
    jobs = []
    for shape in shapes:
        for step_sd in (0.0, 1.5, 3.0):
            for _ in range(series):
                values, reruns, start = make_series(shape, step_sd, units.get(shape, 1.0), rng, rerun_rng, rerun2_rng)
                jobs.append((shape, step_sd, values, reruns, start, rules, gate_min, gate_nearer))
    began = time.time()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        judged = list(pool.map(_judge, jobs, chunksize=20))
    seconds = time.time() - began
    lines = []
    for rule in rules:
        table, total = _table(rule, shapes, judged)
        met = total[3.0][1] / total[3.0][0] >= 0.9 and 1000 * total["fp"] / total["builds"] <= 1.0
        lines += table + [f"target (90 % of 3-sd steps within two builds, <= 1 FP per 1,000 builds): {'met' if met else 'not met'}", ""]
    lines.append(f"{len(jobs)} series of {BUILDS} builds ({series} per shape and kind), seed {seed}, "
                 f"{'TUNING shapes (bench/lib/detection_series.py)' if tune else 'HELD-OUT shapes (bench/lib/detection_series.py)' if holdout else 'evaluation shapes'}, "
                 f"{seconds:.0f} s on {workers} processes")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=300, help="series per shape and kind (noise, 1.5 sd, 3 sd)")
    parser.add_argument("--seed", type=int, default=None, help=f"4242 (evaluation), {detection_series.HOLDOUT_SEED} (--holdout)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--rules", default="engine,two-build,re-measured,combined,gated",
                        help="comma-separated: engine, two-build, re-measured, combined, gated")
    parser.add_argument("--gate-min", type=float, default=GATE_MIN,
                        help="gated: how many engine noise sd the re-run of an engine alert's newest build must be off the same way")
    parser.add_argument("--gate-nearer", type=float, default=GATE_NEARER,
                        help="gated: and this fraction of the alert's shift (0.5: nearer its after level than its before one; 0: off)")
    shapes = parser.add_mutually_exclusive_group()
    shapes.add_argument("--tune", action="store_true", help="the tuning shapes (bench/lib/detection_series.py) instead of the evaluation ones")
    shapes.add_argument("--holdout", action="store_true",
                        help="the held-out shapes (bench/lib/detection_series.py, 2026-11-28c): never tuned on")
    args = parser.parse_args(argv)
    if args.seed is None:
        args.seed = detection_series.HOLDOUT_SEED if args.holdout else 4242
    rules = tuple(r.strip() for r in args.rules.split(",") if r.strip())
    unknown = [r for r in rules if r not in RULES]
    if not rules or unknown:
        parser.error(f"--rules: unknown {', '.join(unknown) or '(none)'}; choose from {', '.join(RULES)}")
    print(run(args.series, args.seed, args.workers, rules, tune=args.tune, gate_min=args.gate_min,
              gate_nearer=args.gate_nearer, holdout=args.holdout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
