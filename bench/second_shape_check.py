"""The static second shape, counted at its guard failure vs compiled again: the same recompile count
and reasons? (runner.engine.dynamo_stats.second_call_recompiles; docs/families.md, "Cost").

Each workload's static case runs twice in this process, as the case engine runs it (tiny size,
by default on the CPU with the eager backend: Dynamo's guards, not the backend, decide recompiles):
once as it is, once with the second shape compiled again as before. Prints per workload the
compile's graph breaks and graphs, whether the second shape was stopped, both counts and whether
the reasons are equal, and the recompiles step's seconds each way; exits 1 when a count or a
reason differs.

    python -m bench.second_shape_check                      # the core suite
    python -m bench.second_shape_check --workloads hf:BertForMaskedLM --backend inductor
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from unittest import mock

from contract.spec import CaseSpec, TimingBudget  # after the path above
from contract.suites import expand_suites
from runner.engine import case as case_module
from runner.engine.dynamo_stats import second_call_recompiles
from runner.engine.result_file import ResultFile

QUICK = TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3, profile=False)


def _run(spec: CaseSpec, directory: Path, *, compile_again: bool) -> dict:
    out = ResultFile(directory / f"{spec.workload.replace(':', '_')}-{compile_again}.json")
    if compile_again:
        def as_before(call, *, stop_before_compiling):
            return second_call_recompiles(call, stop_before_compiling=False)

        with mock.patch.object(case_module, "second_call_recompiles", as_before):
            case_module.run_case(spec, out)
    else:
        case_module.run_case(spec, out)
    return out.read()


def _step_s(record: dict) -> float | None:
    ends = record["environment"].get("phase_end_s", {})
    return round(ends["recompiles"] - ends["memory"], 3) if "recompiles" in ends and "memory" in ends else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="core", help="comma-separated workloads or suites (default: core)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--dtype", default=None, help="default: each workload's first dtype")
    args = parser.parse_args(argv)
    from workloads.registry import get_workload

    differ = 0
    print(f"{'workload':40} {'breaks':>6} {'graphs':>6} {'stopped':>7} {'count':>5} {'before':>6} {'reasons':>7} {'step_s':>7} {'before_s':>8}")
    with tempfile.TemporaryDirectory() as directory:
        for name in expand_suites(args.workloads.split(",")):
            dtype = args.dtype or get_workload(name).dtypes[0]
            spec = CaseSpec(workload=name, compile_mode="default", shape_regime="static", dtype=dtype, device=args.device,
                            backend=args.backend, size=args.size, timing=QUICK)
            now, before = _run(spec, Path(directory), compile_again=False), _run(spec, Path(directory), compile_again=True)
            if now["status"] != "pass" or before["status"] != "pass":
                print(f"{name:40} not compared: {now['status']} / {before['status']}")
                continue
            same = (now["metrics"]["recompile_count"], now["recompiles"]) == (before["metrics"]["recompile_count"], before["recompiles"])
            differ += not same
            m = now["metrics"]
            print(f"{name:40} {m['graph_break_count']!s:>6} {m['unique_graphs']!s:>6} {'yes' if 'second_shape' in now['environment'] else 'no':>7} "
                  f"{m['recompile_count']!s:>5} {before['metrics']['recompile_count']!s:>6} {'same' if same else 'DIFFER':>7} "
                  f"{_step_s(now)!s:>7} {_step_s(before)!s:>8}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
