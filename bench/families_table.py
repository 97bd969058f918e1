"""A table per model family from run documents (bench/results/families/README.md).

    python -m bench.families_table bench/results/families/r*/*.json
    python -m bench.families_table --by-model bench/results/families/locked-*/*.json bench/results/families/regimes-2026-11-27/*.json

Per family (the prefix of ``hf:BertForMaskedLM``): models and cases measured, the static pass rate,
the geometric mean speedup and median cold compile time of the passing static cases, the
unbacked/backed speedup ratio per model where both regimes passed (and how many unbacked cases
failed where backed passed), and the failures by status and error class. Pure Python.

Cost (issue #28's target: the median static bf16 hf case spends at most 30 s outside its cold
compile): per family the median **non-compile seconds** of its static cases that got through a cold
compile, i.e. the case process's wall time (``environment.process_wall_s.cold``, else its last
``phase_end_s``) minus ``compile_time_cold_s``; ``--cost`` adds a line per static case with its
``cost`` steps, the eager step's parts (``eager_parts_s``) and the GPU lock's wait.

A training step (``@train``) is its own row (``hf train``). Dynamic cases are counted per regime
and dims (``backed``, ``unbacked [batch]``, ``unbacked [sequence]``: ``--dims``, docs/case-config.md);
an unbacked case pairs with the backed case of the same model and dims, else with the backed case
on every dim (the regime as the issue lists it: backed on batch and sequence, unbacked on each), and
the pairing is named in the ratio's label.

Cases measured several at a time on one GPU (bench/gpu/families_gpu.sh) wait for its timing lock; the
cost column also gives the median less each case's wait (``environment.gpu_lock_wait_s``).
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path


def _family(workload: str) -> str:
    prefix, colon, _ = workload.partition(":")
    return (prefix if colon else "core") + (" train" if "@train" in workload else "")


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


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _dynamic(rows: list[dict]) -> tuple[dict[str, str], dict[str, dict]]:
    """({regime [dims]: "passed/cases"}, {unbacked label: {"ratio", "pairs", "failed", "against"}})."""
    by_label: dict[str, list[dict]] = defaultdict(list)
    cases: dict[tuple[str, str, str], dict] = {}
    for r in rows:
        regime = r["config"]["shape_regime"]
        if regime == "static":
            continue
        by_label[regime + _dims(r)].append(r)
        cases[(r["workload"], regime, _dims(r))] = r
    passes = {label: f"{sum(r['status'] == 'pass' for r in found)}/{len(found)}" for label, found in sorted(by_label.items())}
    ratios: dict[str, dict] = {}
    for label, found in sorted(by_label.items()):
        if not label.startswith("unbacked"):
            continue
        values, failed, against = [], 0, set()
        for unbacked in found:
            dims = _dims(unbacked)
            backed = cases.get((unbacked["workload"], "backed", dims)) or cases.get((unbacked["workload"], "backed", ""))
            if not backed or backed["status"] != "pass":
                continue
            against.add("backed" + _dims(backed) if _dims(backed) else "backed on every dim")
            if unbacked["status"] == "pass":
                values.append(unbacked["metrics"]["speedup"] / backed["metrics"]["speedup"])
            else:
                failed += 1
        ratios[label] = {"ratio": statistics.geometric_mean(values) if values else None, "pairs": len(values),
                         "failed": failed, "against": " / ".join(sorted(against)) or "-"}
    return passes, ratios


def summarise(results: list[dict]) -> dict[str, dict]:
    by_family: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        by_family[_family(result["workload"])].append(result)
    table = {}
    for family, rows in sorted(by_family.items()):
        static = [r for r in rows if r["config"]["shape_regime"] == "static"]
        passed = [r for r in static if r["status"] == "pass"]
        speedups = [r["metrics"]["speedup"] for r in passed if r["metrics"].get("speedup")]
        compiles = [r["metrics"]["compile_time_cold_s"] for r in passed if r["metrics"].get("compile_time_cold_s")]
        costed = [r for r in static if non_compile_s(r) is not None]
        outside = [non_compile_s(r) for r in costed]
        unlocked = [non_compile_s(r) - ((r.get("environment") or {}).get("gpu_lock_wait_s") or 0.0) for r in costed]
        passes, ratios = _dynamic(rows)
        table[family] = {
            "models": len({_base(r["workload"]) for r in rows}),
            "cases": len(rows),
            "static_pass": f"{len(passed)}/{len(static)}",
            "geomean_speedup": statistics.geometric_mean(speedups) if speedups else None,
            "median_compile_s": _median(compiles),
            "median_non_compile_s": _median(outside),
            "median_non_compile_less_lock_s": _median(unlocked),
            "costed": len(outside),
            "dynamic_passes": passes,
            "unbacked_over_backed": ratios,
            "failures": Counter(_failure(r) for r in rows if r["status"] != "pass"),
        }
    return table


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+", type=Path)
    parser.add_argument("--cost", action="store_true", help="a line per static case: where its wall time went")
    parser.add_argument("--by-model", action="store_true", help="only a table of each model's speedup per regime and dims")
    args = parser.parse_args(argv)
    results = [dict(r, card=_card(doc)) for path in args.documents for doc in [json.loads(path.read_text())] for r in doc["results"]]
    if args.by_model:
        _print_by_model(results)
        return 0
    header = ("family", "models", "cases", "static pass", "geomean speedup", "median compile s",
              "median non-compile s (static cases; less lock waits)", "dynamic pass", "unbacked/backed (pairs; unbacked failed)")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    table = summarise(results)
    for family, row in table.items():
        passes = "; ".join(f"{label} {count}" for label, count in row["dynamic_passes"].items()) or "-"
        ratios = "; ".join(f"{label}: {_fmt(r['ratio'], '.3f')} ({r['pairs']}; {r['failed']}) vs {r['against']}"
                           for label, r in row["unbacked_over_backed"].items()) or "-"
        cost = f"{_fmt(row['median_non_compile_s'], '.1f')} ({row['costed']}; {_fmt(row['median_non_compile_less_lock_s'], '.1f')})"
        print(" | ".join((family, str(row["models"]), str(row["cases"]), row["static_pass"], _fmt(row["geomean_speedup"], ".3f") + "x",
                          _fmt(row["median_compile_s"], ".1f"), cost, passes, ratios)))
    print("\nfailures by class:")
    for family, row in table.items():
        for failure, count in row["failures"].most_common():
            print(f"  {family}: {count} x {failure}")
    if args.cost:
        _print_cost(results)
    print("\nper case:")
    for r in sorted(results, key=lambda r: (r["workload"], _dims(r), r["config"]["shape_regime"])):
        m = r["metrics"]
        print(f"  {r['workload']:45s} {r['config']['shape_regime'] + _dims(r):20s} {r['status']:14s} speedup {_fmt(m.get('speedup'), '.3f')} "
              f"compile {_fmt(m.get('compile_time_cold_s'), '.1f')} s  {((r.get('error') or {}).get('message') or '').replace(chr(10), ' ')[:90]}")
    return 0


def _card(document: dict) -> str:
    """The run's machine class without its ``gpu-`` prefix (``h100``), as each cell of --by-model says it."""
    return str((document.get("machine") or {}).get("machine_class") or "?").removeprefix("gpu-")


BY_MODEL_COLUMNS = ("static", "backed", "backed [batch]", "unbacked [batch]", "backed [sequence]", "unbacked [sequence]")


def _print_by_model(results: list[dict]) -> None:
    """A row per model (options left out: a training step is its own model): each regime and dims'
    speedup over eager and the card it ran on, or its status; then unbacked over backed on the same
    dims where both passed (marked where they ran on different cards). A later document's case
    replaces an earlier one's."""
    cells: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in results:
        cells[r["workload"]][r["config"]["shape_regime"] + _dims(r)] = r

    def cell(r: dict | None) -> str:
        if r is None:
            return "-"
        speedup = (r.get("metrics") or {}).get("speedup")
        shown = f"{speedup:.3f}" if r["status"] == "pass" and speedup else r["status"]
        return f"{shown} ({r['card']})"

    def ratio(unbacked: dict | None, backed: dict | None) -> str:
        if not unbacked or not backed or unbacked["status"] != "pass" or backed["status"] != "pass":
            return "-"
        value = unbacked["metrics"]["speedup"] / backed["metrics"]["speedup"]
        return f"{value:.3f}" + ("" if unbacked["card"] == backed["card"] else " (cards differ)")

    header = ("model", *BY_MODEL_COLUMNS, "unbacked/backed [batch]", "unbacked/backed [sequence]")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for model in sorted(cells):
        row = cells[model]
        print(" | ".join((model, *(cell(row.get(c)) for c in BY_MODEL_COLUMNS),
                          ratio(row.get("unbacked [batch]"), row.get("backed [batch]")),
                          ratio(row.get("unbacked [sequence]"), row.get("backed [sequence]")))))


def outside_compile_and_timing_s(result: dict) -> float | None:
    """The case's wall time outside its cold compile and its two timing steps (issue #44's "cost
    outside the cold compile and the timing"): building, accuracy, memory, the warm compile, starting."""
    outside, steps = non_compile_s(result), result.get("cost") or {}
    return None if outside is None else outside - (steps.get("eager_timing") or 0.0) - (steps.get("compiled_timing") or 0.0)


def _print_cost(results: list[dict]) -> None:
    static = [r for r in results if r["config"]["shape_regime"] == "static"]
    beyond = [v for v in map(outside_compile_and_timing_s, static) if v is not None]
    print(f"\nmedian outside the cold compile and the timing: {_fmt(_median(beyond), '.1f')} s over {len(beyond)} static cases")
    print("cost of static cases (seconds): wall, cold compile, outside it; cost steps; eager parts; GPU lock wait")
    for r in sorted(static, key=lambda r: r["workload"]):
        environment = r.get("environment") or {}
        wall = (environment.get("process_wall_s") or {}).get("cold")
        steps = " ".join(f"{k}={v:g}" for k, v in (r.get("cost") or {}).items())
        parts = " ".join(f"{k}={v:g}" for k, v in (environment.get("eager_parts_s") or {}).items())
        print(f"  {r['workload'] + _dims(r):45s} {r['status']:14s} wall {_fmt(wall, '.1f')} compile "
              f"{_fmt(r['metrics'].get('compile_time_cold_s'), '.1f')} outside {_fmt(non_compile_s(r), '.1f')} | {steps} | eager: {parts} "
              f"| lock wait {_fmt(environment.get('gpu_lock_wait_s'), '.1f')}")


if __name__ == "__main__":
    raise SystemExit(main())
