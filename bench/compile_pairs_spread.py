"""How steady is ``compile_cpu_ratio`` from run to run? The runner's own compile pairs, repeated.

Each measurement is what ``python -m runner run --compile-reference PY --compile-pairs N`` adds to a
case (``runner.engine.compile_pairs.CompilePairs.measure``): N pairs of fresh-process cold compiles,
the build beside the reference, and the geometric mean of their CPU-time ratios. ``--streams 2``
runs two measurements at once, as two cases on one host (a fleet's two workers per machine), each
stream cycling through the workloads from a different start (``--split-cpus``: each stream on its
own half of the CPUs, as two runners each under ``taskset``, so that each puts its pairs' main
threads on a core of its own). A ``--config`` override applies to the
build side only (a build variant; the reference never has overrides), so a planted change shows as
a ratio away from 1.

    python -m bench.compile_pairs_spread --workloads masked_attention,bert_encoder,llama_decode \
        --pairs 3 --streams 2 --split-cpus --deadline-s 430 --out spread.json
    python -m bench.compile_pairs_spread --modes plain,prewarm ...   # the measures the runner's replaced
    python -m bench.compile_pairs_spread --from spread.json [run-document.json ...]   # only the table
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _sd_log(values: list[float]) -> str:
    logs = [math.log(v) for v in values if v and v > 0]
    return f"{100 * statistics.stdev(logs):5.1f}%" if len(logs) > 1 else "    -"


def rows_from(path: Path) -> list[dict]:
    """This script's ``--out`` rows, or the rows of a run document whose cases were measured with
    ``--compile-reference`` (``environment.compile_pairs``)."""
    data = json.loads(path.read_text())
    if "rows" in data:
        return data["rows"]
    overrides = (data.get("build") or {}).get("overrides") or {}
    variant = ",".join(f"{k}={v}" for k, v in (overrides.get("config") or {}).items()) or "base"
    return [{"workload": r["workload"], "variant": variant, "record": r["environment"]["compile_pairs"]}
            for r in data.get("results", []) if (r.get("environment") or {}).get("compile_pairs")]


def report(rows: list[dict]) -> str:
    """Per workload, variant, measurement mode and pairs per measurement (k): the measured run-to-run
    spread (sd of the log, %) of the wall-time ratio, of the CPU-time ratio (``compile_cpu_ratio``)
    and of the main process's own CPU-time ratio; one pair's spread of each; what a geometric mean
    of k independent pairs would spread (one pair's CPU / sqrt(k)); and the build's own cold compile
    wall time (what ``compile_time_cold_s`` is)."""
    from runner.engine.compile_pairs import geometric_mean

    lines = [f"{'workload':17} {'variant':16} {'mode':16} {'k':>2} {'n':>2} {'wall ratio':>10} {'sd':>6} {'cpu ratio':>9} {'sd':>6} "
             f"{'own sd':>6}  {'pairs':>5} {'1 pair sd wall/cpu/own':>24} {'/sqrt(k)':>8}  {'build wall s':>12} {'sd':>6} {'cpu s':>6}"]
    groups: dict[tuple[str, str, str, int], list[dict]] = {}
    for row in rows:
        key = (row["workload"], row["variant"], row.get("mode", "method1"), len(row["record"]["pairs"]))
        groups.setdefault(key, []).append(row)
    for (workload, variant, mode, k), group in sorted(groups.items()):
        good = [r for r in group if r["record"]["wall_ratio"] is not None]
        wall = [r["record"]["wall_ratio"] for r in good]
        work = [r["record"]["work_ratio"] for r in good]
        pairs = [p for r in good for p in r["record"]["pairs"] if "error" not in p]
        own = [g for r in good if (g := geometric_mean([p["build_own_cpu_s"] / p["reference_own_cpu_s"] for p in r["record"]["pairs"]
                                                if "error" not in p and p.get("reference_own_cpu_s")]))]
        pairs = [p for p in pairs if p["build_cpu_s"] > 0 and p["reference_cpu_s"] > 0]
        single_wall = [p["build_wall_s"] / p["reference_wall_s"] for p in pairs]
        single_cpu = [p["build_cpu_s"] / p["reference_cpu_s"] for p in pairs]
        single_own = [p["build_own_cpu_s"] / p["reference_own_cpu_s"] for p in pairs if p.get("reference_own_cpu_s")]
        logs = [math.log(v) for v in single_cpu]
        predicted = f"{100 * statistics.stdev(logs) / math.sqrt(k):7.1f}%" if len(logs) > 1 else "       -"
        build_walls = [r["record"]["pairs"][0]["build_wall_s"] for r in good if "error" not in r["record"]["pairs"][0]]
        build_cpu = [p["build_cpu_s"] for p in pairs]
        lines.append(
            f"{workload:17} {variant[:16]:16} {mode[:16]:16} {k:>2} {len(good):>2} {statistics.median(wall) if wall else float('nan'):10.3f} "
            f"{_sd_log(wall):>6} {statistics.median(work) if work else float('nan'):9.3f} {_sd_log(work):>6} {_sd_log(own):>6}  {len(pairs):>5} "
            f"{_sd_log(single_wall):>8}/{_sd_log(single_cpu):>6}/{_sd_log(single_own):>6} {predicted:>8}  "
            f"{statistics.median(build_walls) if build_walls else float('nan'):12.2f} {_sd_log(build_walls):>6} "
            f"{statistics.median(build_cpu) if build_cpu else float('nan'):6.1f}")
        errors = [p["error"] for r in group for p in r["record"]["pairs"] if "error" in p]
        if errors:
            lines.append(f"  {len(errors)} pairs failed, e.g.: {errors[0][-160:]!r}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="masked_attention,bert_encoder,llama_decode")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--streams", type=int, default=2)
    parser.add_argument("--reference", default=sys.executable, help="the reference interpreter (default: this one)")
    parser.add_argument("--config", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a build variant for stream 2 onwards' build side (stream 1 stays the plain build)")
    parser.add_argument("--one-thread-per-core", action="store_true", help="pin each pair to one hardware thread per core")
    parser.add_argument("--split-cpus", action="store_true", help="give each stream its own share of the CPUs")
    parser.add_argument("--modes", default="share",
                        help="how pairs are measured, cycled through (comma-separated): share (the runner's: pool started "
                             "before the go line, both main threads on one core), prewarm (pool started before, each side "
                             "on any core), plain (the pool starts inside the compile, any core)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="full")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--deadline-s", type=float, default=540, help="no new measurement starts after this many seconds")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from", dest="from_files", type=Path, nargs="+", help="only print the table of stored --out files or run documents")
    args = parser.parse_args()
    if args.from_files:
        print(report([row for path in args.from_files for row in rows_from(path)]))
        return 0

    from contract.spec import CaseSpec
    from contract.variants import Overrides
    from runner.engine.compile_pairs import CompilePairs, probe_reference
    from workloads.registry import get_workload

    overrides = Overrides.from_cli(args.config, [])
    pairs = CompilePairs(reference=probe_reference(args.reference), pairs=args.pairs, one_thread_per_core=args.one_thread_per_core)
    names = args.workloads.split(",")
    started = time.monotonic()
    rows: list[dict] = []
    lock = threading.Lock()

    def stream(index: int) -> None:
        mine = pairs
        if args.split_cpus:
            allowed = sorted(os.sched_getaffinity(0))
            share = len(allowed) // args.streams
            mine = dataclasses.replace(pairs, cpus=frozenset(allowed[index * share:(index + 1) * share]))
        config = overrides.config if index > 0 else {}
        variant = ",".join(f"{k}={v}" for k, v in config.items()) or "base"
        turn = index
        modes = args.modes.split(",")
        while time.monotonic() - started < args.deadline_s:
            name = names[turn % len(names)]
            mode = modes[(turn // len(names)) % len(modes)]
            turn += 1
            workload = get_workload(name)
            spec = CaseSpec(workload=name, compile_mode="default", shape_regime="static", dtype=workload.dtypes[0],
                            device=args.device, size=args.size, config_overrides=dict(config))
            measured = dataclasses.replace(mine, prewarm=mode in ("share", "prewarm"), shared_core=mode == "share")
            record = measured.measure(spec, sys.executable, timeout_s=args.timeout)
            row = {"stream": index, "workload": name, "variant": variant, "mode": mode, "record": record,
                   "at_s": round(time.monotonic() - started, 1)}
            print(json.dumps(row), flush=True)
            with lock:
                rows.append(row)
                if args.out:
                    args.out.write_text(json.dumps({"argv": sys.argv[1:], "rows": rows}, indent=1))

    threads = [threading.Thread(target=stream, args=(i,)) for i in range(args.streams)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
