"""What the compile records and the kernel profile add to a case's wall time (issue #30,
docs/explain.md): at most 10 % is the rule.

Runs each workload's case (cold + warm processes, as the runner does) with the profile off and on,
in turn, ``--repeats`` times, and prints per workload: the median wall time of each (the whole
case: both processes), the profile step (``cost.profile``: one profiled call of each side), the
records' own time (``compile_phases.*.overhead_s``, reading PyTorch's records) and the
fingerprinting (``kernel_profile.fingerprint_s``, reading the generated code), and their share of
the case's wall time. The on/off wall-time difference is also shown, but on a shared host it is
noise-bound (one compile's spread is larger than the profile); the in-case figures are exact.

    python -m bench.explain_overhead [--workloads mlp_loop,bert_encoder] [--repeats 1] [--device cpu] [--size tiny]

``--backend eager`` runs the same steps without inductor (no kernels to profile or fingerprint):
the test of every benchmark (tests/bench/test_benchmarks_run.py) runs it so, in a third of the time.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys

from contract.spec import CaseSpec
from runner.engine.executor import CaseExecutor


def measure(workload: str, *, device: str, size: str, profile: bool, backend: str = "inductor") -> dict:
    spec = CaseSpec(workload=workload, compile_mode="default", shape_regime="static", dtype="float32", device=device, size=size,
                    backend=backend)
    spec = dataclasses.replace(spec, timing=dataclasses.replace(spec.timing_budget, profile=profile))
    result = CaseExecutor(python=sys.executable, timeout_s=1800, warm=True).run(spec, workload_name=workload, repro="")
    if result["status"] != "pass":
        raise SystemExit(f"{workload}: {result['status']} {result.get('error')}")
    phases = result.get("compile_phases") or {}
    records_s = sum((side or {}).get("overhead_s", 0.0) for side in phases.values())
    fingerprint_s = (result.get("kernel_profile") or {}).get("fingerprint_s", 0.0)
    return {"wall_s": result["duration_s"], "profile_s": (result.get("cost") or {}).get("profile", 0.0),
            "records_s": records_s, "fingerprint_s": fingerprint_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="mlp_loop,bert_encoder")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--backend", default="inductor", choices=["inductor", "eager"])
    args = parser.parse_args()
    print(f"explain overhead: device {args.device}, size {args.size}, backend {args.backend}, {args.repeats} repeat(s), "
          "cold + warm processes")
    print(f"{'workload':<16} {'wall off':>9} {'wall on':>9} {'profile':>8} {'records':>8} {'fprint':>7} {'added':>7} {'on-off':>7}")
    for workload in args.workloads.split(","):
        off, on = [], []
        for _ in range(args.repeats):
            off.append(measure(workload, device=args.device, size=args.size, profile=False, backend=args.backend))
            on.append(measure(workload, device=args.device, size=args.size, profile=True, backend=args.backend))
        wall_off = statistics.median(r["wall_s"] for r in off)
        wall_on = statistics.median(r["wall_s"] for r in on)
        added = {key: statistics.median(r[key] for r in on) for key in ("profile_s", "records_s", "fingerprint_s")}
        share = sum(added.values()) / wall_on
        print(f"{workload:<16} {wall_off:>8.2f}s {wall_on:>8.2f}s {added['profile_s']:>7.3f}s {added['records_s']:>7.4f}s "
              f"{added['fingerprint_s']:>6.4f}s {share:>6.2%} {wall_on / wall_off - 1:>+6.1%}")
    print("added = (profile + records + fingerprint) / wall on; on-off = wall on / wall off - 1 (host noise included)")


if __name__ == "__main__":
    main()
