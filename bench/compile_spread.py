"""Run-to-run spread of cold compile time per workload: wall time as recorded, and wall time at a
fixed host speed (scaled by the host probe that a sidecar timed during the compile, see
runner/engine/host_speed.py), over run documents of one build (or of each build label).

    python -m bench.compile_spread bench/results/history/hist-base-*.json

Prints per workload: runs, median, range and sd of `compile_time_cold_s`, the same for
`compile_time_cold_s * P / probe` (P: the median probe over all the files, so the figure stays in
seconds), and the range of the probe itself.
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path


def spread(values: list[float]) -> tuple[float, float, float]:
    """(median, (max-min)/median, sd/mean), the last two in percent."""
    median = statistics.median(values)
    sd = statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0
    return median, 100 * (max(values) - min(values)) / median, 100 * sd


def rows_from(paths: list[Path], by_label: bool) -> dict[tuple[str, str], list[tuple[float, float | None]]]:
    rows: dict[tuple[str, str], list[tuple[float, float | None]]] = defaultdict(list)
    for path in paths:
        document = json.loads(path.read_text())
        label = document["build"].get("local_label", "") if by_label else "all"
        for result in document["results"]:
            compile_s = result["metrics"].get("compile_time_cold_s")
            if result["status"] != "pass" or compile_s is None:
                continue
            probe = ((result.get("environment") or {}).get("compile") or {}).get("host_probe_ms", {}).get("median")
            rows[(result["workload"], label)].append((compile_s, probe))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--by-label", action="store_true", help="one row per build local_label (base and variants)")
    args = parser.parse_args()
    rows = rows_from(args.files, args.by_label)
    probes = [p for values in rows.values() for _, p in values if p]
    reference = statistics.median(probes) if probes else None
    print(f"{'workload':18} {'build':34} {'n':>2} {'wall median':>11} {'range':>7} {'sd':>6}   "
          f"{'at fixed host':>13} {'range':>7} {'sd':>6}   probe ms (min-max)")
    for (workload, label), values in sorted(rows.items()):
        wall = [w for w, _ in values]
        median, rng, sd = spread(wall)
        line = f"{workload:18} {label[:34]:34} {len(wall):>2} {median:10.2f}s {rng:6.1f}% {sd:5.1f}%"
        scaled = [w * reference / p for w, p in values if p]
        if len(scaled) == len(values) and reference:
            s_median, s_rng, s_sd = spread(scaled)
            ps = [p for _, p in values]
            line += f"   {s_median:12.2f}s {s_rng:6.1f}% {s_sd:5.1f}%   {min(ps):.2f}-{max(ps):.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
