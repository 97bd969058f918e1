"""Shared against alone (issue #44 items 5-6): a GPU's runs of the same models grouped by how they
ran, per model each group's median speedup and run-to-run sd (of the log, %), the gap of its median
to the models measured alone, and how fast the host ran while they timed (the host probe's median,
ms: about 1.0 on an idle core of the H200 hosts, more when the host is busy).

    python -m bench.timing_cores --group on A.json B.json --group off C.json D.json --group alone E.json

Default: the 2026-11-29 runs of bench/gpu/timing_cores_gpu.sh (bench/results/timing-cores-h200-2026-11-29).
The last group named ``alone`` (if any) is what the gaps are taken against.
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from bench.compile_to_compile import cases_of
from contract.comparison import repeat_sd

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench/results/timing-cores-h200-2026-11-29"
DEFAULT = [[name, *sorted(RESULTS.glob(f"{name}-*.json"))] for name in ("on", "off", "alone")]


def group_rows(groups: list[list]) -> dict[str, dict[str, dict]]:
    """workload -> group -> {"speedups": [...], "probe_ms": [...]}"""
    rows: dict[str, dict[str, dict]] = {}
    for name, *paths in groups:
        for (workload, _, _, _), results in cases_of([Path(p) for p in paths]).items():
            cell = rows.setdefault(workload, {}).setdefault(name, {"speedups": [], "probe_ms": []})
            for result in results:
                cell["speedups"].append(result["metrics"]["speedup"])
                probe = (((result.get("environment") or {}).get("timing") or {}).get("host_probe_ms") or {}).get("median")
                if probe is not None:
                    cell["probe_ms"].append(probe)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", nargs="+", action="append", metavar=("NAME", "DOCUMENT"),
                        help="a group's name, then its run documents (repeat per group)")
    groups = parser.parse_args().group or DEFAULT
    names = [g[0] for g in groups]
    rows = group_rows(groups)
    print("per model and group: median speedup, run-to-run sd % (runs), gap of the median to alone %, host probe ms (median)")
    print(f"{'model':<36} " + " ".join(f"{n:>40}" for n in names))
    sd_counts = {n: [0, 0] for n in names}
    gaps: dict[str, list[float]] = {n: [] for n in names}
    for workload in sorted(rows):
        cells = []
        alone = rows[workload].get("alone")
        base = statistics.median(alone["speedups"]) if alone else None
        for name in names:
            cell = rows[workload].get(name)
            if not cell:
                cells.append(f"{'-':>40}")
                continue
            median = statistics.median(cell["speedups"])
            sd = repeat_sd([cell["speedups"]]) if len(cell["speedups"]) > 1 else None
            gap = None if base is None or name == "alone" else 100 * (median / base - 1)
            if sd is not None:
                sd_counts[name][0] += sd <= 0.01
                sd_counts[name][1] += 1
            if gap is not None:
                gaps[name].append(gap)
            probe = statistics.median(cell["probe_ms"]) if cell["probe_ms"] else float("nan")
            text = (f"{median:.3f}x sd {'-' if sd is None else f'{100 * sd:.2f}'} ({len(cell['speedups'])}) "
                    f"gap {'-' if gap is None else f'{gap:+.1f}'} probe {probe:.2f}")
            cells.append(f"{text:>40}")
        print(f"{workload:<36} " + " ".join(cells))
    print()
    for name in names:
        probes = [p for w in rows.values() for p in (w.get(name) or {}).get("probe_ms", [])]
        within = sum(1 for g in gaps[name] if abs(g) <= 1.0)
        print(f"{name}: sd <= 1 % on {sd_counts[name][0]} of {sd_counts[name][1]} models; "
              + (f"median within 1 % of alone on {within} of {len(gaps[name])}; " if gaps[name] else "")
              + (f"host probe median {statistics.median(probes):.2f} ms (p90 {statistics.quantiles(probes, n=10)[-1]:.2f})"
                 if len(probes) > 1 else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
