"""What a case pays to start, in a fresh interpreter and forked from a warm process (issue #44 item 4,
docs/runner-processes.md section 7).

Runs each workload's case (eager backend by default: the start does not depend on the compile) in
turn through the runner's executor, once per repeat in a fresh ``python -m runner case`` and once
forked from a warm process of the same interpreter (``runner.engine.warm_start``, its default
imports), alternating so that the host's load hits both. Per case: ``start`` (the runner's request
to torch and the case code imported: ``environment.case_process.start_s``), ``library`` (the
workload's import: its model library, ``eager_parts_s.workload``), ``build`` (the model built, with
the imports its model class makes), ``compile`` (``cost.compile``: with the eager backend, mostly
importing dynamo in a fresh process), ``wall`` (the case process's wall time), and ``ready`` (start +
library + build: the seconds before the case's first eager call). Prints every case, then the medians.

    python -m bench.case_start                                   # TinyMLP and hf:BertForMaskedLM, 3 repeats
    python -m bench.case_start --workloads hf:BertForMaskedLM,timm:resnet50 --device cuda --repeats 5
    python -m bench.case_start --workloads mlp_loop --repeats 1 --imports torch._dynamo,torch._inductor.compile_fx

``--imports``: what the warm process imports (``PTBENCH_WARM_IMPORTS``; default: the compiler and the
model libraries, as a worker's), e.g. the compiler alone for the core suite's workloads.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from contract.spec import CaseSpec
from runner.engine.executor import CaseExecutor, child_environment
from runner.engine.warm_start import IMPORTS_ENV, WarmProcess

COLUMNS = ("start", "library", "build", "compile", "wall")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="tests.runner.sample_workloads:TinyMLP,hf:BertForMaskedLM")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--imports", help=f"comma-separated modules the warm process imports ({IMPORTS_ENV}; default its own list)")
    return parser.parse_args()


def one_case(workload: str, args: argparse.Namespace, starter) -> dict:
    spec = CaseSpec(workload=workload, compile_mode="default", shape_regime="static", dtype=args.dtype, device=args.device,
                    backend=args.backend, import_allowed=True)
    result = CaseExecutor(python=sys.executable, timeout_s=args.timeout, warm=False, warm_start=starter).run(
        spec, workload_name=workload, repro="")
    environment = result["environment"]
    parts = environment.get("eager_parts_s") or {}
    started = environment.get("case_process") or {}
    return {"status": result["status"], "how": started.get("started_by", "?"), "start": started.get("start_s"),
            "library": parts.get("workload"), "build": parts.get("build"), "compile": (result.get("cost") or {}).get("compile"),
            "wall": environment["process_wall_s"]["cold"]}


def main() -> int:
    args = parse_args()
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    began = time.monotonic()
    env = child_environment(None)
    if args.imports:
        env[IMPORTS_ENV] = args.imports
    warm = WarmProcess.start(sys.executable, Path(tempfile.mkdtemp(prefix="ptbench-bench-warm-")), env)
    print(f"warm process ready in {time.monotonic() - began:.1f} s (once per worker): {warm.imports()}")
    rows = []
    try:
        for repeat in range(args.repeats):
            for workload in workloads:
                for how, starter in (("fresh", None), ("warm", warm.starter())):
                    row = {"workload": workload, "mode": how, "repeat": repeat + 1, **one_case(workload, args, starter)}
                    rows.append(row)
                    print(f"  {workload} {how} #{repeat + 1}: {row['status']}, " + ", ".join(f"{c} {row[c]}" for c in COLUMNS), flush=True)
    finally:
        warm.stop()
    print(f"\nmedians of {args.repeats} ({args.device}, {args.backend}, {args.dtype}), seconds")
    print(f"{'workload':42} {'started by':11} " + " ".join(f"{c:>8}" for c in COLUMNS) + f" {'ready':>8}")
    for workload in workloads:
        for mode in ("fresh", "warm"):
            picked = [r for r in rows if r["workload"] == workload and r["mode"] == mode and r["status"] == "pass"]
            if not picked:
                print(f"{workload:42} {mode:11} no passing case")
                continue
            med = {c: statistics.median(r[c] or 0.0 for r in picked) for c in COLUMNS}
            ready = statistics.median(sum(r[c] or 0.0 for c in ("start", "library", "build")) for r in picked)
            print(f"{workload:42} {picked[0]['how']:11} " + " ".join(f"{med[c]:8.2f}" for c in COLUMNS) + f" {ready:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
