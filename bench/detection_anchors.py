"""Detection benchmark: our online detector against the anchors on labeled series.

    python -m bench.detection_anchors                 # default: 1,000 synthetic + 300 GPU-noise series
    python -m bench.detection_anchors --quick         # 250 + 100 series, Otava on 60
    python -m bench.detection_anchors --series 3000 --seed 7 --otava-series 200
    python -m bench.detection_anchors --runtime       # also time 10,000 series of 200 points

Every series is replayed online (one build at a time, as the dashboard sees it): an alert counts
when it is first raised and is never taken back. An alert is a true positive when its first bad
build is within 5 builds (the margin) of a planted change not matched yet, and was raised after
that change; every other alert is false. Delay: builds seen from the change to the alert, both
included (2 = raised on the second bad build). The series are described in bench/lib/detection_series.py,
the anchors in bench/lib/detection_baselines.py.
"""
from __future__ import annotations

import argparse
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from bench.lib import detection_baselines as baselines
from bench.lib import detection_series as gen
from detection import replay_online

MARGIN = 5
BUCKETS = ((0.0, 1.5, "<1.5 sd"), (1.5, 2.0, "1.5-2 sd"), (2.0, 3.0, "2-3 sd"), (3.0, 5.0, "3-5 sd"),
           (5.0, math.inf, ">=5 sd"))


# -- methods -------------------------------------------------------------------------------------
def run_ptbench(s: gen.Series, use_samples: bool = False):
    cps = replay_online(s.values, direction=s.direction, samples=s.samples if use_samples else None)
    return [(cp.first_bad, cp.raised_at) for cp in cps], []


def run_ptbench_samples(s):
    return run_ptbench(s, use_samples=True)


def run_perfherder(s):
    return baselines.perfherder(s.values), []


def run_hud(s):
    return baselines.hud(s.values), []


def run_otava(s):
    return baselines.otava(s.values, margin=MARGIN)

METHODS = {
    "ptbench": run_ptbench,
    "ptbench+samples": run_ptbench_samples,
    "perfherder t-test": run_perfherder,
    "hud 5% x2": run_hud,
    "otava e-div+t": run_otava,
}


def _work(args):
    name, series = args
    fn = METHODS[name]
    t0 = time.perf_counter()
    out = [fn(s) for s in series]
    return out, time.perf_counter() - t0


def run_method(name: str, series: list[gen.Series], workers: int):
    chunks = [series[i::workers] for i in range(workers)] if workers > 1 else [series]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_work, [(name, c) for c in chunks]))
    else:
        parts = [_work((name, series))]
    results: list = [None] * len(series)
    for w, (out, _) in enumerate(parts):
        for k, r in enumerate(out):
            results[w + k * workers if workers > 1 else k] = r
    cpu = sum(p[1] for p in parts)
    return results, cpu


# -- scoring -------------------------------------------------------------------------------------
def score(series: list[gen.Series], results: list) -> dict:
    tp = fp = n_true = found = 0
    retracted = 0
    noise_builds = noise_false = 0
    fam_builds: dict = {}
    fam_false: dict = {}
    all_builds = 0
    delays: list[int] = []
    by_bucket = {label: {"n": 0, "found": 0, "delays": []} for _, _, label in BUCKETS}
    for s, (alerts, retr) in zip(series, results):
        n = len(s.values)
        all_builds += n
        retracted += len(retr)
        matched: set[int] = set()
        false_here = 0
        for first_bad, raised in sorted(alerts, key=lambda a: a[1]):
            best = None
            for k, c in enumerate(s.changes):
                if k in matched or abs(first_bad - c) > MARGIN or raised < c:
                    continue
                if best is None or abs(first_bad - c) < abs(first_bad - s.changes[best]):
                    best = k
            if best is None:
                fp += 1
                false_here += 1
            else:
                tp += 1
                matched.add(best)
        sizes = s.sizes_in_sd
        for k, c in enumerate(s.changes):
            n_true += 1
            label = next(lbl for lo, hi, lbl in BUCKETS if lo <= sizes[k] < hi)
            by_bucket[label]["n"] += 1
        # delays: first alert matched to each change
        for k, c in enumerate(s.changes):
            if k not in matched:
                continue
            found += 1
            hits = [r for fb, r in alerts if abs(fb - c) <= MARGIN and r >= c]
            d = min(hits) - c + 1
            delays.append(d)
            label = next(lbl for lo, hi, lbl in BUCKETS if lo <= sizes[k] < hi)
            by_bucket[label]["found"] += 1
            by_bucket[label]["delays"].append(d)
        if not s.changes:
            noise_builds += n
            noise_false += false_here
            fam_builds[s.family] = fam_builds.get(s.family, 0) + n
            fam_false[s.family] = fam_false.get(s.family, 0) + false_here
    big = [b for lo, _, label in BUCKETS if lo >= 3.0 for b in [by_bucket[label]]]
    big_n = sum(b["n"] for b in big)
    big_delays = [d for b in big for d in b["delays"]]
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = found / n_true if n_true else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "precision": precision, "recall": recall, "f1": f1,
        "fa_per_1000": 1000.0 * noise_false / noise_builds if noise_builds else float("nan"),
        "false_per_1000_all": 1000.0 * fp / all_builds,
        "delay_median": float(np.median(delays)) if delays else float("nan"),
        "delay_p90": float(np.percentile(delays, 90)) if delays else float("nan"),
        "by_bucket": by_bucket, "n_true": n_true, "noise_builds": noise_builds,
        "fam": {f: (1000.0 * fam_false[f] / fam_builds[f], fam_false[f], fam_builds[f]) for f in fam_builds},
        "retracted": retracted, "false": fp,
        "recall_ge3": sum(len(b["delays"]) for b in big) / big_n if big_n else float("nan"),
        "delay_ge3": float(np.median(big_delays)) if big_delays else float("nan"),
        "recall_15": (by_bucket["1.5-2 sd"]["found"] / by_bucket["1.5-2 sd"]["n"]) if by_bucket["1.5-2 sd"]["n"] else float("nan"),
    }


# -- printing ------------------------------------------------------------------------------------
def fmt(v, spec=".2f"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def report(title: str, series: list[gen.Series], scored: dict, cpu: dict, counts: dict) -> str:
    out = [title]
    rows = []
    for name, sc in scored.items():
        per_10k = cpu[name] / counts[name] * 10_000
        rows.append([name, str(counts[name]), fmt(sc["precision"], ".3f"), fmt(sc["recall"], ".3f"), fmt(sc["f1"], ".3f"),
                     fmt(sc["fa_per_1000"], ".2f"), fmt(sc["false_per_1000_all"], ".2f"),
                     fmt(sc["delay_median"], ".0f"), fmt(sc["delay_p90"], ".0f"), fmt(per_10k, ".0f")])
    out.append(table(["method", "series", "precision", "recall", "F1", "FA/1k noise", "FA/1k all",
                      "delay med", "delay p90", "cpu s/10k"], rows))
    out.append("")
    rows = []
    for name, sc in scored.items():
        cells = [name]
        for _, _, label in BUCKETS:
            b = sc["by_bucket"][label]
            rec = b["found"] / b["n"] if b["n"] else float("nan")
            cells.append(f"{fmt(rec, '.3f')} ({b['n']})")
            cells.append(f"{fmt(float(np.median(b['delays'])) if b['delays'] else float('nan'), '.0f')}/"
                         f"{fmt(float(np.percentile(b['delays'], 90)) if b['delays'] else float('nan'), '.0f')}")
        rows.append(cells)
    headers = ["recall (steps) | delay med/p90"]
    for _, _, label in BUCKETS:
        headers += [label, "delay"]
    out.append(table(headers, rows))
    fams = sorted({f for sc in scored.values() for f in sc["fam"]})
    if fams:
        out.append("")
        rows = []
        for name, sc in scored.items():
            rows.append([name] + [f"{fmt(sc['fam'][f][0], '.2f')} ({sc['fam'][f][1]})" if f in sc["fam"] else "-" for f in fams]
                        + [str(sc["retracted"])])
        out.append(table(["false alerts /1k builds of pure noise (count)"] + fams + ["retracted"], rows))
    for name, sc in scored.items():
        if not name.startswith("ptbench"):
            continue
        checks = [
            (f"false alerts {sc['fa_per_1000']:.2f} per 1,000 noise builds", sc["fa_per_1000"] <= 0.5, "<= 0.5"),
            (f"steps >= 3 sd found {sc['recall_ge3']:.1%}", sc["recall_ge3"] >= 0.95, ">= 95%"),
            (f"their median delay {sc['delay_ge3']:.0f} builds", sc["delay_ge3"] <= 2, "<= 2"),
            (f"steps of 1.5-2 sd found {sc['recall_15']:.1%}", sc["recall_15"] >= 0.6, ">= 60%"),
        ]
        out.append(f"targets, {name}: " + "; ".join(f"{txt} ({'met' if ok else 'NOT met'}, {bar})" for txt, ok, bar in checks))
    return "\n".join(out)


def evaluate(title, series, methods, workers, otava_series):
    scored, cpu, counts = {}, {}, {}
    for name in methods:
        subset = series[:otava_series] if name.startswith("otava") else series
        res, secs = run_method(name, subset, workers)
        scored[name] = score(subset, res)
        cpu[name] = secs
        counts[name] = len(subset)
    return report(title, series, scored, cpu, counts)


def h100_noise_table() -> str:
    """Both noises of the H100 cases: within-run (standard error of a run's median from its per-block
    speedups) and between runs (the two runs of the same build)."""
    from detection import within_run_se

    rows, ratios = [], []
    for case in gen._h100_cases():
        se = within_run_se(list(np.exp(case["residuals"])))
        diff = case["rerun_diff"]
        if diff is not None:
            ratios.append(diff / math.sqrt(2.0) / se)
        rows.append([case["key"], str(len(case["residuals"])), f"{se:.3%}", "-" if diff is None else f"{diff:.3%}",
                     "-" if diff is None else f"{diff / math.sqrt(2.0) / se:.1f}"])
    out = table(["H100 case", "blocks", "within-run se", "run-to-run |diff|", "diff/sqrt2 / se"], rows)
    return out + (f"\nmedian ratio of between-run sd (|diff|/sqrt2) to within-run se: {np.median(ratios):.1f} "
                  f"({len(ratios)} cases run twice)")


def runtime_pass(workers: int) -> str:
    series = gen.synthetic(10_000, seed=12345)
    rows = []
    for name in ("ptbench", "hud 5% x2", "perfherder t-test"):
        t0 = time.perf_counter()
        run_method(name, series, workers)
        rows.append([name, f"{time.perf_counter() - t0:.1f}"])
    return table([f"wall s for 10,000 series x 200 points ({workers} processes)", "seconds"], rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=1000, help="synthetic series (default 1000)")
    ap.add_argument("--gpu-series", type=int, default=300, help="series with the H100 runs' noise (default 300)")
    ap.add_argument("--otava-series", type=int, default=400, help="series Otava runs on (slow; default 400)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--quick", action="store_true", help="250 + 100 series, Otava on 60")
    ap.add_argument("--runtime", action="store_true", help="also time 10,000 series of 200 points")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--methods", default="ptbench,perfherder t-test,hud 5% x2,otava e-div+t")
    args = ap.parse_args(argv)
    if args.quick:
        args.series, args.gpu_series, args.otava_series = 250, 100, 60
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    t0 = time.perf_counter()
    series = gen.synthetic(args.series, seed=args.seed)
    print(evaluate(f"== Synthetic: {args.series} series x 200 builds, seed {args.seed}, 40% pure noise "
                   f"(Otava on the first {min(args.otava_series, args.series)})", series, methods, args.workers,
                   args.otava_series))
    if args.gpu_series:
        print()
        print(h100_noise_table())
        gseries = gen.gpu_series(args.gpu_series, seed=args.seed + 1)
        gmethods = methods[:1] + ["ptbench+samples"] + methods[1:]
        print()
        print(evaluate(f"== H100 noise: {args.gpu_series} speedup series with the measured per-block samples and "
                       f"run-to-run noise (Otava on the first {min(args.otava_series, args.gpu_series)})",
                       gseries, gmethods, args.workers, args.otava_series))
    if args.runtime:
        print()
        print(runtime_pass(args.workers))
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
