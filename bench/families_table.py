"""A table per model family from run documents (bench/results/families/README.md).

    python bench/families_table.py bench/results/families/r*/*.json

Per family (the prefix of ``hf:BertForMaskedLM``): models and cases measured, the static pass rate,
the geometric mean speedup and median cold compile time of the passing static cases, the
unbacked/backed speedup ratio per model where both regimes passed (and how many unbacked cases
failed where backed passed), and the failures by status and error class. Pure Python.

Cost (issue #28's target: the median static bf16 hf case spends at most 30 s outside its cold
compile): per family the median **non-compile seconds** of its static cases that got through a cold
compile, i.e. the case process's wall time (``environment.process_wall_s.cold``, else its last
``phase_end_s``) minus ``compile_time_cold_s``; ``--cost`` adds a line per static case with its
``cost`` steps, the eager step's parts (``eager_parts_s``) and the GPU lock's wait.

Cases whose configuration names dims (``--dims batch``: docs/case-config.md) are their own rows,
``hf [batch]``: a backed and an unbacked case pair up only within the same dims.
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path


def _family(workload: str) -> str:
    prefix, colon, _ = workload.partition(":")
    return prefix if colon else "core"


def _dims(result: dict) -> str:
    dims = result["config"].get("dims")
    return f" [{','.join(dims)}]" if dims else ""


def _base(workload: str) -> str:
    return workload.partition("@")[0]


def _failure(result: dict) -> str:
    error = result.get("error") or {}
    return f"{result['status']} {error.get('type', '')}".strip()


def non_compile_s(result: dict) -> float | None:
    """The case process's wall time outside its cold compile (None before a compile finished)."""
    environment = result.get("environment") or {}
    wall = (environment.get("process_wall_s") or {}).get("cold")
    ends = environment.get("phase_end_s") or {}
    if wall is None and ends:
        wall = max(ends.values())
    compile_s = (result.get("metrics") or {}).get("compile_time_cold_s")
    return None if wall is None or compile_s is None else wall - compile_s


def summarise(results: list[dict]) -> dict[str, dict]:
    by_family: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        by_family[_family(result["workload"]) + _dims(result)].append(result)
    table = {}
    for family, rows in sorted(by_family.items()):
        static = [r for r in rows if r["config"]["shape_regime"] == "static"]
        passed = [r for r in static if r["status"] == "pass"]
        speedups = [r["metrics"]["speedup"] for r in passed if r["metrics"].get("speedup")]
        compiles = [r["metrics"]["compile_time_cold_s"] for r in passed if r["metrics"].get("compile_time_cold_s")]
        outside = [v for v in map(non_compile_s, static) if v is not None]
        regimes: dict[str, dict[str, dict]] = defaultdict(dict)
        for r in rows:
            regimes[r["workload"]][r["config"]["shape_regime"]] = r
        ratios, unbacked_failed = [], 0
        for cases in regimes.values():
            backed, unbacked = cases.get("backed"), cases.get("unbacked")
            if backed and unbacked and backed["status"] == "pass":
                if unbacked["status"] == "pass":
                    ratios.append(unbacked["metrics"]["speedup"] / backed["metrics"]["speedup"])
                else:
                    unbacked_failed += 1
        table[family] = {
            "models": len({_base(r["workload"]) for r in rows}),
            "cases": len(rows),
            "static_pass": f"{len(passed)}/{len(static)}",
            "geomean_speedup": statistics.geometric_mean(speedups) if speedups else None,
            "median_compile_s": statistics.median(compiles) if compiles else None,
            "median_non_compile_s": statistics.median(outside) if outside else None,
            "costed": len(outside),
            "unbacked_over_backed": statistics.geometric_mean(ratios) if ratios else None,
            "pairs": len(ratios),
            "unbacked_failed_where_backed_passed": unbacked_failed,
            "failures": Counter(_failure(r) for r in rows if r["status"] != "pass"),
        }
    return table


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+", type=Path)
    parser.add_argument("--cost", action="store_true", help="a line per static case: where its wall time went")
    args = parser.parse_args(argv)
    results = [r for path in args.documents for r in json.loads(path.read_text())["results"]]
    header = ("family", "models", "cases", "static pass", "geomean speedup", "median compile s", "median non-compile s (static cases)",
              "unbacked/backed (pairs)")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    table = summarise(results)
    for family, row in table.items():
        ratio = f"{_fmt(row['unbacked_over_backed'], '.3f')} ({row['pairs']}; {row['unbacked_failed_where_backed_passed']} unbacked failed)"
        print(" | ".join((family, str(row["models"]), str(row["cases"]), row["static_pass"], _fmt(row["geomean_speedup"], ".3f") + "x",
                          _fmt(row["median_compile_s"], ".1f"), f"{_fmt(row['median_non_compile_s'], '.1f')} ({row['costed']})", ratio)))
    print("\nfailures by class:")
    for family, row in table.items():
        for failure, count in row["failures"].most_common():
            print(f"  {family}: {count} x {failure}")
    if args.cost:
        _print_cost(results)
    print("\nper case:")
    for r in sorted(results, key=lambda r: (r["workload"], _dims(r), r["config"]["shape_regime"])):
        m = r["metrics"]
        print(f"  {r['workload']:45s} {r['config']['shape_regime'] + _dims(r):16s} {r['status']:14s} speedup {_fmt(m.get('speedup'), '.3f')} "
              f"compile {_fmt(m.get('compile_time_cold_s'), '.1f')} s  {((r.get('error') or {}).get('message') or '').replace(chr(10), ' ')[:90]}")
    return 0


def _print_cost(results: list[dict]) -> None:
    print("\ncost of static cases (seconds): wall, cold compile, outside it; cost steps; eager parts; GPU lock wait")
    for r in sorted(results, key=lambda r: r["workload"]):
        if r["config"]["shape_regime"] != "static":
            continue
        environment = r.get("environment") or {}
        wall = (environment.get("process_wall_s") or {}).get("cold")
        steps = " ".join(f"{k}={v:g}" for k, v in (r.get("cost") or {}).items())
        parts = " ".join(f"{k}={v:g}" for k, v in (environment.get("eager_parts_s") or {}).items())
        print(f"  {r['workload'] + _dims(r):45s} {r['status']:14s} wall {_fmt(wall, '.1f')} compile "
              f"{_fmt(r['metrics'].get('compile_time_cold_s'), '.1f')} outside {_fmt(non_compile_s(r), '.1f')} | {steps} | eager: {parts} "
              f"| lock wait {_fmt(environment.get('gpu_lock_wait_s'), '.1f')}")


if __name__ == "__main__":
    raise SystemExit(main())
