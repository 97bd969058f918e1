"""Which speedup estimator is steadiest from one run to the next? Recomputed from stored samples.

Every run document keeps its per-block samples (eager and compiled, timed in alternating pairs).
This script recomputes each case's speedup with several estimators and prints, per case and
estimator, the spread of the runs of one build on one machine class ((max - min) / median; the
target is < 2%), then per estimator the largest spread and how many cases are under 2%:

- ``pair_median``: median of per-pair ratios (the runner's estimator, ``speedup_ratio``);
- ``median_ratio``: median eager / median compiled (PyTorch's benchmarks/dynamo harness);
- ``q25_ratio``: lower quartile eager / lower quartile compiled (host interference only adds time);
- ``min_ratio``: fastest eager block / fastest compiled block (Chen & Revels 2016);
- ``pair_q75``: upper quartile of the per-pair ratios.

    python -m bench.noise_estimators bench/results/h100-torch2.11-*.json
    python -m bench.noise_estimators bench/results/h200-torch2.11-*.json

An estimator picked because it wins on these files is fitted to them: check it on runs measured
after the choice (bench/results/README.md says which were).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict

from bench.suite_report import build_name, case_key, load

from runner.engine.stats import percentile, speedup_ratio

TARGET = 0.02


def quantile(values: list[float], fraction: float) -> float:
    return percentile(sorted(values), fraction)


ESTIMATORS = {
    "pair_median": speedup_ratio,
    "median_ratio": lambda e, c: statistics.median(e) / statistics.median(c),
    "q25_ratio": lambda e, c: quantile(e, 0.25) / quantile(c, 0.25),
    "min_ratio": lambda e, c: min(e) / min(c),
    "pair_q75": lambda e, c: quantile([a / b for a, b in zip(e, c)], 0.75),
}


def speedups_by_case(documents: list[dict]) -> dict[tuple, dict[str, list[float]]]:
    """{(case, build, machine class): {estimator: [speedup of each run]}} for passing cases with samples."""
    found: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for document in documents:
        for result in document["results"]:
            samples = result.get("samples") or {}
            eager, compiled = samples.get("eager_ms"), samples.get("compiled_ms")
            if result["status"] != "pass" or not eager or not compiled or len(eager) != len(compiled):
                continue
            key = (*case_key(result), build_name(document), document["machine"].get("machine_class"))
            for name, estimate in ESTIMATORS.items():
                found[key][name].append(estimate(eager, compiled))
    return found


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+")
    args = parser.parse_args()
    cases = {k: v for k, v in speedups_by_case([load(p) for p in args.documents]).items() if len(v["pair_median"]) >= 2}
    if not cases:
        print("no case has two runs of one build on one machine class")
        return 1
    names = list(ESTIMATORS)
    print(f"Run-to-run spread of speedup per estimator, {len(args.documents)} documents (target < {TARGET:.0%}; * over)")
    print(f"{'workload':24s} {'mode':10s} {'regime':9s} {'machine':10s} runs " + " ".join(f"{n:>13s}" for n in names))
    spreads: dict[str, list[float]] = {n: [] for n in names}
    for key, by_estimator in sorted(cases.items()):
        cells = []
        for name in names:
            s = spread(by_estimator[name])
            spreads[name].append(s)
            cells.append(f"{s:12.2%}{'*' if s >= TARGET else ' '}")
        print(f"{key[0]:24s} {key[1]:10s} {key[2]:9s} {key[6]!s:10s} {len(by_estimator['pair_median']):4d} " + " ".join(cells))
    print(f"{'largest spread':60s}" + " ".join(f"{max(spreads[n]):12.2%} " for n in names))
    print(f"{'cases under target':60s}" + " ".join(f"{sum(s < TARGET for s in spreads[n]):>9d}/{len(spreads[n]):<3d}" for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
