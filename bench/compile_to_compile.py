"""Compile to compile: how far a case's own interval falls short of its run-to-run spread, and what
moves between compiles (issue #44 item 6; docs/measuring.md, "How precise a case is").

Reads run documents of repeated runs of one build (default: the six stock runs of the H200 family
history, bench/results/families/history-h200-2026-11-28/hist-base-*.json) and prints

1. per case: its runs, the speedup's median and range, the run-to-run sd (of the log, %) of the
   speedup, the eager and the compiled latency, its own 95 % half-widths, how many of them are
   narrower than the run-to-run sd, and whether its generated kernels' fingerprints (the normalised
   Triton/C++ source) are the same in every run;
2. each run of each case: speedup, latencies, host share, host probe, the GPU lock's wait and whether
   timing was extended (what set the slow and the fast runs apart);
3. per case, the compiled side's profiled kernels whose time per call moved most between runs;
4. the check "no case's interval narrower than its series' run-to-run sd", on the own intervals and on
   the reported ones (``contract.case_interval``: the wider of the own and Z_95 x the series' sd), the
   series' sd from all its runs (what the dashboard reports once they are stored) and from the other
   runs only (leave one out: what a run would have reported with only the others known). Exits 1
   where a reported interval (all runs) is narrower than the sd.

    python -m bench.compile_to_compile [DOCUMENT ...] [--kernels 3]
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from contract.case_interval import case_interval, class_sd
from contract.comparison import repeat_sd

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = sorted((ROOT / "bench/results/families/history-h200-2026-11-28").glob("hist-base-*.json"))


def cases_of(paths: list[Path]) -> dict[tuple, list[dict]]:
    """The passing results of the documents by case (workload, configuration, machine class, build),
    each with its run's label and start."""
    cases: dict[tuple, list[dict]] = {}
    for path in paths:
        document = json.loads(path.read_text())
        build = document["build"].get("git_sha") or document["build"].get("torch_version")
        for result in document["results"]:
            if result.get("status") != "pass" or not (result.get("metrics") or {}).get("speedup"):
                continue
            config = "/".join(str(result["config"].get(k)) for k in ("compile_mode", "shape_regime", "dtype", "device"))
            key = (result["workload"], config, document["machine"].get("machine_class"), build)
            cases.setdefault(key, []).append(dict(result, run_label=document["build"].get("label") or path.stem,
                                                  started=document["run"].get("started_at", "")))
    return cases


def sd_pct(values) -> str:
    sd = repeat_sd([values])
    return "-" if sd is None else f"{100 * sd:.2f}"


def fingerprints(result: dict) -> tuple:
    return tuple(sorted(k.get("fingerprint") or "" for k in (result.get("kernel_profile") or {}).get("kernels", [])))


def per_call(result: dict) -> dict[str, float]:
    """The compiled side's profiled entries: name -> ms per call of the model (one profiled call)."""
    out = {}
    for entry in (result.get("kernel_profile") or {}).get("compiled", []):
        out.setdefault(entry["name"], entry.get("self_ms") or 0.0)
    return out


def case_table(cases: dict[tuple, list[dict]]) -> None:
    print("1. Per case: run-to-run sd (of the log, %) against each run's own 95 % half-width")
    print(f"{'case':<42} {'runs':>4} {'speedup median (range)':>24} {'sd %':>6} {'eager sd %':>10} {'compiled sd %':>13} "
          f"{'own ±% (min-max)':>17} {'own < sd':>8} {'same kernels':>12}")
    for (workload, config, _, _), results in sorted(cases.items()):
        speedups = [r["metrics"]["speedup"] for r in results]
        own = [100 * (r["metrics"].get("speedup_noise") or 0.0) for r in results]
        sd = repeat_sd([speedups])
        narrower = sum(1 for h in own if sd is not None and h / 100 < sd)
        sets = {fingerprints(r) for r in results}
        print(f"{workload + ' ' + config.split('/')[1]:<42} {len(results):>4} "
              f"{statistics.median(speedups):>9.3f}x ({min(speedups):.3f}-{max(speedups):.3f}) {sd_pct(speedups):>6} "
              f"{sd_pct([r['metrics']['eager_latency_ms'] for r in results]):>10} "
              f"{sd_pct([r['metrics']['compiled_latency_ms'] for r in results]):>13} "
              f"{min(own):>8.2f}-{max(own):.2f} {narrower:>5}/{len(results)} "
              f"{'yes' if len(sets) == 1 else f'{len(sets)} sets':>12}")


def run_table(cases: dict[tuple, list[dict]]) -> None:
    print("\n2. Each run: what set the slow and the fast ones apart")
    print(f"{'case':<26} {'run':<16} {'started':<9} {'speedup':>8} {'own ±%':>7} {'eager ms':>9} {'comp ms':>8} "
          f"{'host share e/c':>14} {'probe ms':>8} {'lock wait s':>11} {'timed s':>7}")
    for (workload, _, _, _), results in sorted(cases.items()):
        for r in sorted(results, key=lambda r: r["run_label"]):
            metrics, environment = r["metrics"], r.get("environment") or {}
            timing = environment.get("timing") or {}
            share = timing.get("host_share") or {}
            probe = (timing.get("host_probe_ms") or {}).get("median")
            print(f"{workload:<26} {r['run_label'][:16]:<16} {r['started'][11:19]:<9} {metrics['speedup']:>7.3f}x "
                  f"{100 * (metrics.get('speedup_noise') or 0):>7.2f} {metrics['eager_latency_ms']:>9.3f} "
                  f"{metrics['compiled_latency_ms']:>8.3f} {share.get('eager', float('nan')):>6.3f}/{share.get('compiled', float('nan')):.3f} "
                  f"{probe if probe is not None else float('nan'):>8.2f} {environment.get('gpu_lock_wait_s') or 0:>11.1f} "
                  f"{timing.get('timed_s') or 0:>6.1f}{'+' if timing.get('extended') else ' '}")


def kernel_table(cases: dict[tuple, list[dict]], top: int) -> None:
    print("\n3. The compiled side's profiled kernels (one profiled call per run) whose time moved most: "
          "ms per call of the model in each run (the order of table 2), the source's fingerprint")
    for (workload, config, _, _), results in sorted(cases.items()):
        results = sorted(results, key=lambda r: r["run_label"])
        calls = [per_call(r) for r in results]
        common = set.intersection(*(set(c) for c in calls)) if calls else set()
        prints = {k["name"]: k.get("fingerprint") for r in results for k in (r.get("kernel_profile") or {}).get("kernels", [])}
        moved = sorted(common, key=lambda name: -(max(c[name] for c in calls) - min(c[name] for c in calls)))[:top]
        print(f"{workload} {config.split('/')[1]}:")
        for name in moved:
            times = [c[name] for c in calls]
            same = len({fingerprints(r) for r in results}) == 1
            where = f"fingerprint {prints[name]} in every run" if name in prints and same else "library kernel" if name not in prints else "source differs"
            print(f"    {' '.join(f'{t:.3f}' for t in times)} ms (x{max(times) / min(times):.2f})  {name[:80]}  ({where})")


def check(cases: dict[tuple, list[dict]]) -> int:
    """Prints the check; returns how many reported intervals (all runs) are narrower than the sd."""
    sds = {key: repeat_sd([[r["metrics"]["speedup"] for r in results]]) for key, results in cases.items()}
    prior = class_sd({k: v for k, v in sds.items() if v is not None})
    counts = {"own": 0, "reported": 0, "reported, leave one out": 0}
    total = 0
    rows = []
    for key, results in sorted(cases.items()):
        sd = sds[key]
        if sd is None:
            continue
        for i, r in enumerate(results):
            own = r["metrics"].get("speedup_noise")
            others = [x["metrics"]["speedup"] for j, x in enumerate(results) if j != i]
            loo_sd = repeat_sd([others])
            reported = case_interval(own, sd)
            loo = case_interval(own, loo_sd) if loo_sd is not None else case_interval(own, prior, from_class=True)
            total += 1
            for name, halfwidth in (("own", own), ("reported", reported.halfwidth), ("reported, leave one out", loo.halfwidth)):
                if halfwidth is None or math.log1p(halfwidth) < sd:
                    counts[name] += 1
                    if name != "own":
                        rows.append(f"    {key[0]} {r['run_label']}: {name} ±{100 * halfwidth:.2f} % < sd {100 * sd:.2f} %")
    print(f"\n4. No case's interval narrower than its series' run-to-run sd ({total} case runs of {len(cases)} series; "
          f"class run-to-run sd {100 * prior:.2f} % where a series has no other run)" if prior is not None else "\n4. (no repeated runs)")
    for name, narrower in counts.items():
        print(f"    {name + ' interval':<34} narrower than the sd: {narrower} of {total}")
    print("\n".join(rows))
    return counts["reported"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="*", type=Path, default=DEFAULT, help="run documents of repeated runs of one build")
    parser.add_argument("--kernels", type=int, default=3, help="kernels listed per case in table 3")
    args = parser.parse_args()
    cases = cases_of(args.documents)
    if not cases:
        print("no passing case in the documents", file=sys.stderr)
        return 2
    case_table(cases)
    run_table(cases)
    kernel_table(cases, args.kernels)
    narrower = check(cases)
    print("\nfigure: " + ("met: no reported interval is narrower than its series' run-to-run sd" if not narrower
                          else f"NOT met: {narrower} reported intervals are narrower than their series' run-to-run sd"))
    return 1 if narrower else 0


if __name__ == "__main__":
    raise SystemExit(main())
