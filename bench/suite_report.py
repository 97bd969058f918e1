"""Tables from run documents: per-case figures, unbacked/backed gaps, graph breaks, and run-to-run noise.

    python -m bench.suite_report [--from-samples] RUN.json [RUN2.json ...]
    python -m bench.suite_report bench/results/releases/*.json     (a release history: builds side by side)

The gap and graph-break tables cover every case of the documents (the first document that has a
case wins). ``--from-samples`` recomputes each speedup from its stored per-block samples with the
runner's current estimator (``runner.engine.stats.speedup_ratio``), so runs stored before an
estimator change are compared the way new runs are measured.

With two or more documents of the same suite (separate processes, same build and machine) it also
prints, per case, the relative difference of speedup between the runs: the number that says how
small a regression the product can detect. Pure Python: runs where the runner runs (no Django).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from contract.metrics import COMPILE_TIMES  # pure Python: the registry's cold / warm compile times
from runner.engine.stats import speedup_ratio  # pure Python, no torch


def load(path: str) -> dict:
    return json.loads(Path(path).read_text())


def case_key(result: dict) -> tuple:
    c = result["config"]
    return (result["workload"], c["compile_mode"], c["shape_regime"], c["dtype"], c["device"])


def fmt(value, spec: str = ".3f", missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in [h, *[r[i] for r in rows]]) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    print()


def cases_table(document: dict) -> None:
    rows = []
    for r in sorted(document["results"], key=case_key):
        m = r.get("metrics", {})
        rows.append([
            r["workload"], r["config"]["compile_mode"], r["config"]["shape_regime"], r["config"]["dtype"], r["status"],
            fmt(m.get("speedup")), fmt(m.get("speedup_noise"), ".2%"), fmt(m.get("compiled_latency_ms"), ".3f"),
            *(fmt(m.get(compile_time.name), ".1f") for compile_time in COMPILE_TIMES),
            fmt(m.get("eager_peak_memory_bytes") and m["eager_peak_memory_bytes"] / 2**20, ".0f"),
            fmt(m.get("compiled_peak_memory_bytes") and m["compiled_peak_memory_bytes"] / 2**20, ".0f"),
            fmt(m.get("graph_break_count"), "d"), fmt(m.get("recompile_count"), "d"), fmt(r.get("duration_s"), ".0f"),
        ])
    print_table(["workload", "mode", "regime", "dtype", "status", "speedup", "±95%", "ms", "cold s", "warm s",
                 "eager MiB", "comp MiB", "breaks", "recomp", "case s"], rows)


def gap_table(document: dict) -> None:
    by_case = {case_key(r): r for r in document["results"]}
    rows = []
    for key, r in sorted(by_case.items()):
        if key[2] != "unbacked":
            continue
        backed = by_case.get((key[0], key[1], "backed", key[3], key[4]))
        if not backed:
            continue
        su, sb = r.get("metrics", {}).get("speedup"), backed.get("metrics", {}).get("speedup")
        cu, cb = r.get("metrics", {}).get("compile_time_cold_s"), backed.get("metrics", {}).get("compile_time_cold_s")
        rows.append([key[0], key[1], key[3], r["status"], backed["status"], fmt(sb), fmt(su),
                     fmt(su / sb if su and sb else None), fmt(cu / cb if cu and cb else None, ".2f")])
    if rows:
        print("Unbacked vs backed (ratio < 1: unbacked is slower)")
        print_table(["workload", "mode", "dtype", "unbacked", "backed", "backed x", "unbacked x", "speedup ratio", "compile ratio"], rows)


def graph_break_table(document: dict) -> None:
    rows = []
    for r in sorted(document["results"], key=case_key):
        for b in r.get("graph_breaks", []):
            rows.append([r["workload"], r["config"]["compile_mode"], r["config"]["shape_regime"], str(b.get("count", 1)),
                         (b.get("location") or "")[-60:], b["reason"].replace("\n", " ")[:110]])
    print(f"Graph breaks ({len(rows)} distinct reason/case pairs)")
    if rows:
        print_table(["workload", "mode", "regime", "n", "location", "reason"], rows)


def sample_speedup(result: dict) -> float | None:
    samples = result.get("samples") or {}
    eager, compiled = samples.get("eager_ms"), samples.get("compiled_ms")
    return speedup_ratio(eager, compiled) if eager and compiled and len(eager) == len(compiled) else None


def build_name(document: dict) -> str:
    build = document["build"]
    return f"{build['torch_version']} ({build['git_sha'][:12]})"


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return statistics.geometric_mean(values) if values else None


def release_table(documents: list[dict]) -> None:
    """Builds side by side (a release history): per build the cases and failures, and over the cases
    that pass on every build the speedup and cold-compile geomeans, graph breaks and recompiles;
    then each case whose status, graph breaks or recompiles differ between builds."""
    by_build: dict[str, dict] = defaultdict(dict)
    for document in documents:
        for r in document["results"]:
            by_build[build_name(document)].setdefault(case_key(r), r)
    if len(by_build) < 2:
        return
    common = set.intersection(*(set(k for k, r in cases.items() if r["status"] == "pass") for cases in by_build.values()))
    rows = []
    for name, cases in by_build.items():
        shared = [cases[k] for k in common]
        failed = [f"{k[0]}/{k[2]}: {r['status']}" for k, r in sorted(cases.items()) if r["status"] != "pass"]
        rows.append([name, str(len(cases)), fmt(geomean([r["metrics"].get("speedup") for r in shared])),
                     fmt(geomean([r["metrics"].get("compile_time_cold_s") for r in shared]), ".2f"),
                     str(sum(r["metrics"].get("graph_break_count") or 0 for r in shared)),
                     str(sum(r["metrics"].get("recompile_count") or 0 for r in shared)), "; ".join(failed) or "-"])
    print(f"Across builds ({len(common)} cases that pass on every build; geomeans over them)")
    print_table(["build", "cases", "speedup", "cold s", "breaks", "recompiles", "not passing"], rows)
    changes = []
    for key in sorted(set.union(*(set(c) for c in by_build.values()))):
        seen = [(name, cases.get(key)) for name, cases in by_build.items()]
        shape = {(r["status"], r["metrics"].get("graph_break_count"), r["metrics"].get("recompile_count")) for _, r in seen if r}
        if len(shape) > 1:
            changes.append([key[0], key[2], *[f"{r['status']} b{r['metrics'].get('graph_break_count')} "
                                             f"r{r['metrics'].get('recompile_count')}" if r else "-" for _, r in seen]])
    if changes:
        print("Cases whose status (b: graph breaks, r: recompiles) changes between builds")
        print_table(["workload", "regime", *by_build], changes)


def host_note(result: dict) -> str:
    """``host 1.77/0.98``: the run's median host probe (ms) and compiled host share, where recorded."""
    timing = result.get("environment", {}).get("timing") or {}
    probe, share = (timing.get("host_probe_ms") or {}).get("median"), (timing.get("host_share") or {}).get("compiled")
    return "" if probe is None and share is None else f"{fmt(probe, '.2f')}/{fmt(share, '.2f')}"


def noise_table(documents: list[dict], *, from_samples: bool = False) -> None:
    speedups, hosts = defaultdict(list), defaultdict(list)
    for document in documents:
        for r in document["results"]:
            s = sample_speedup(r) if from_samples else r.get("metrics", {}).get("speedup")
            if r["status"] == "pass" and s:  # runs of one build only: across builds is a trend, not noise
                key = (*case_key(r), build_name(document))
                speedups[key].append(s)
                hosts[key].append(host_note(r))
    rows, spreads = [], []
    for key, values in sorted(speedups.items()):
        if len(values) < 2:
            continue
        spread = (max(values) - min(values)) / statistics.median(values)
        spreads.append(spread)
        host = " ".join(h or "-" for h in hosts[key]) if any(hosts[key]) else ""
        rows.append([key[0], key[1], key[2], key[3], " ".join(fmt(v) for v in values), fmt(spread, ".2%"),
                     "OK" if spread < 0.02 else "NOISY", host])
    if rows:
        how = "recomputed from samples, paired-ratio median" if from_samples else "as stored"
        print(f"Run-to-run speedup difference across {len(documents)} runs ({how}; target < 2%)")
        print("host: per run, median host probe ms / compiled host share (enqueue over device time; ~1 = host-bound), GPU runs")
        print_table(["workload", "mode", "regime", "dtype", "speedups", "rel. diff", "", "host"], rows)
        print(f"cases: {len(spreads)}, median rel. diff {statistics.median(spreads):.2%}, max {max(spreads):.2%}, "
              f"under 2%: {sum(s < 0.02 for s in spreads)}/{len(spreads)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+")
    parser.add_argument("--from-samples", action="store_true", help="recompute speedups from the stored samples")
    args = parser.parse_args()
    documents = [load(p) for p in args.documents]
    for path, document in zip(args.documents, documents):
        run, build, machine = document["run"], document["build"], document["machine"]
        print(f"== {path}: size {run['suite']}, torch {build['torch_version']} ({build['git_sha'][:12]}), "
              f"{machine.get('gpu_name') or machine.get('cpu_model')}, {len(document['results'])} cases, "
              f"{run.get('started_at')} -> {run.get('finished_at')}")
        cases_table(document)
    every_case: dict = {}
    for document in documents:
        for result in document["results"]:
            every_case.setdefault(case_key(result), result)
    union = {"results": list(every_case.values())}
    gap_table(union)
    graph_break_table(union)
    if len(documents) > 1:
        release_table(documents)
        noise_table(documents, from_samples=args.from_samples)


if __name__ == "__main__":
    sys.exit(main())
