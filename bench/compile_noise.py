"""Where does a cold compile's run-to-run spread come from, and which measure of it is steady?

Runs the cold compile of each workload (static, default mode) many times, each in a fresh process
with fresh inductor/triton caches, interleaving workloads and settings so that a drift of the host
hits all of them alike. Per compile it records:
- wall: the synchronised first compiled call (what ``compile_time_cold_s`` is);
- cpu: user+system seconds of the case process and of the children it waited for (ptxas) during
  that call; compile workers in a pool are not children it waits for, so ``cpu`` says how much of
  the work ran in the process itself;
- the host probe (``runner.engine.timing.host_probe_ms``) just before and after the compile;
- dynamo's own phase timers (``torch._dynamo.utils.compile_times``).
Settings: ``threads=N`` sets ``TORCHINDUCTOR_COMPILE_THREADS`` (1 = every kernel compiled in the
process itself, no worker pool). ``--concurrent K`` runs K compiles at once (a shared host).

    python -m bench.compile_noise --workloads masked_attention,bert_encoder,llama_decode \
        --settings default,threads=1 --repeats 5 --out compile-noise.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _probe_median(n: int = 7) -> float:
    from runner.engine.timing import host_probe_ms

    return statistics.median(host_probe_ms() for _ in range(n))


def _steal_ticks() -> int:
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    return int(fields[8]) if len(fields) > 8 else 0


def _shutdown_compile_workers(torch) -> bool:
    """The pool's workers exit, so that their counts join the process's inherited counters."""
    for owner in ("torch._inductor.async_compile",):
        try:
            module = __import__(owner, fromlist=["_"])
        except ImportError:
            continue
        shutdown = getattr(module, "shutdown_compile_workers", None)
        if shutdown is not None:
            shutdown()
            return True
    return False


def child(workload_name: str, device: str, size: str) -> dict:
    from runner.engine.work_counter import WorkCounter

    whole = WorkCounter()  # opened before torch starts any compile worker: the pool's work counts
    if os.environ.get("PTBENCH_PIN_PROBE") == "1":
        from runner.engine.host_speed import reserve_probe_cpu

        reserve_probe_cpu()
    import torch

    from runner.engine.case import CompiledSide, EagerSide
    from runner.engine.memory import MemoryProbe
    from contract.spec import CaseSpec
    from workloads.registry import get_workload

    spec = CaseSpec(workload=workload_name, compile_mode="default", shape_regime="static", dtype="float32",
                    device=device, size=size)
    workload = get_workload(workload_name)
    spec = CaseSpec(**{**spec.__dict__, "dtype": workload.dtypes[0]})
    probe = MemoryProbe(device)
    eager = EagerSide(workload, spec, probe)
    probe_before = _probe_median()
    steal_before = _steal_ticks()
    at_start = whole.read()
    self_before, children_before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe)
    wall = time.perf_counter() - started
    in_process = whole.read()
    pool_shut = _shutdown_compile_workers(torch)
    at_end = whole.read()
    steal_after = _steal_ticks()
    self_after, children_after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    probe_after = _probe_median()
    phases = {}
    try:
        names, values = torch._dynamo.utils.compile_times(repr="csv", aggregate=True)
        phases = {n: float(v) for n, v in zip(names, values) if v not in ("", None)}
    except Exception as exc:  # the timers moved between releases
        phases = {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "workload": workload_name,
        "wall_s": wall,
        "compile_time_s": compiled.compile_time_s,
        "cpu_self_s": (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime),
        "cpu_children_s": (children_after.ru_utime + children_after.ru_stime)
        - (children_before.ru_utime + children_before.ru_stime),
        "counters": {"available": whole.available, "at_start": at_start, "after_compile": in_process,
                     "after_pool_exit": at_end, "pool_shut": pool_shut},
        "steal_ticks": steal_after - steal_before,
        "probe_before_ms": probe_before,
        "probe_after_ms": probe_after,
        "phases": phases,
        "sidecar": compiled.host_speed.as_environment() if compiled.host_speed else None,
        "torch": torch.__version__,
    }


def run_one(workload: str, setting: str, args) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryDirectory(prefix="ptbench-cn-") as cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = f"{cache}/inductor"
        env["TRITON_CACHE_DIR"] = f"{cache}/triton"
        for part in setting.split("+"):
            if part.startswith("threads="):
                env["TORCHINDUCTOR_COMPILE_THREADS"] = part.split("=", 1)[1]
            if part == "seed":  # one hash seed: sets and dicts of str iterate in the same order every run
                env["PYTHONHASHSEED"] = "0"
            if part == "pin":  # the sidecar on a CPU of its own (runner.engine.host_speed)
                env["PTBENCH_PIN_PROBE"] = "1"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", workload, "--device", args.device, "--size", args.size],
            env=env, capture_output=True, text=True, timeout=args.timeout,
        )
    row = {"workload": workload, "setting": setting, "process_s": time.perf_counter() - started}
    if done.returncode != 0:
        row["error"] = done.stderr[-2000:]
        return row
    row.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return row


def spread(values: list[float]) -> str:
    if len(values) < 2:
        return "-"
    m = statistics.median(values)
    return f"{100 * (max(values) - min(values)) / m:5.1f}% sd {100 * statistics.stdev(values) / statistics.mean(values):4.1f}%"


def _counted(row: dict, key: str) -> float | None:
    counters = row.get("counters") or {}
    start, end = (counters.get("at_start") or {}).get(key), (counters.get("after_pool_exit") or {}).get(key)
    return None if start is None or end is None else end - start


def report(rows: list[dict]) -> str:
    """Per workload x setting: the median and the run-to-run spread (range and sd, % of the median)
    of wall time, wall time at fixed host speed (the sidecar's probe), CPU time of the process and its
    compile workers (task clock) and user-space instructions retired."""
    lines = [f"{'workload':18} {'setting':10} {'n':>2} {'wall':>8} {'spread':19} {'host-fixed':19} "
             f"{'cpu':>8} {'spread':19} {'instr (G)':>9} {'spread':19} {'probe ms':>11}"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        if "error" not in row:
            groups.setdefault((row["workload"], f"{row['setting']}x{row.get('concurrent', 1)}"), []).append(row)
    for (workload, setting), group in sorted(groups.items()):
        walls = [r["compile_time_s"] for r in group]
        probes = [((r.get("sidecar") or {}).get("host_probe_ms") or {}).get("median") or r.get("probe_before_ms")
                  for r in group]
        normal = [w / p for w, p in zip(walls, probes)] if all(probes) else []
        cpus = [c for c in (_counted(r, "task_clock_s") for r in group) if c is not None]
        instructions = [c / 1e9 for c in (_counted(r, "instructions") for r in group) if c is not None]
        lines.append(
            f"{workload:18} {setting:10} {len(group):>2} {statistics.median(walls):7.2f}s {spread(walls):19} "
            f"{spread(normal):19} {statistics.median(cpus) if cpus else float('nan'):7.2f}s {spread(cpus):19} "
            f"{statistics.median(instructions) if instructions else float('nan'):9.1f} {spread(instructions):19} "
            f"{min(probes or [0]):.2f}-{max(probes or [0]):.2f}")
    paired = [r for r in rows if "ratio" in r]
    if paired:
        lines.append("paired: compile time over that of the same compile run beside it (a reference), per workload")
        for workload in sorted({r["workload"] for r in paired}):
            ratios = [r["ratio"] for r in paired if r["workload"] == workload]
            logs = [abs(__import__("math").log(x)) for x in ratios]
            cpu_ratios = [_counted(r, "task_clock_s") / _counted(r["reference"], "task_clock_s") for r in paired
                          if r["workload"] == workload and _counted(r["reference"], "task_clock_s")]
            lines.append(f"  {workload:18} n {len(ratios):>2}  wall ratio median {statistics.median(ratios):.3f}  {spread(ratios)}  "
                         f"|log ratio| median {100 * statistics.median(logs):.1f}%   cpu ratio {spread(cpu_ratios)}")
    errors = [r for r in rows if "error" in r]
    if errors:
        lines.append(f"{len(errors)} failed: " + "; ".join(f"{r['workload']}/{r['setting']}: {r['error'][-200:]}" for r in errors))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child")
    parser.add_argument("--workloads", default="masked_attention,bert_encoder,llama_decode")
    parser.add_argument("--settings", default="default,threads=1")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=1)
    parser.add_argument("--paired", action="store_true",
                        help="each job compiles the workload in two fresh processes at once (a build and its reference) and "
                             "records the ratio: how steady compile time is relative to a reference compiled beside it")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="full")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--deadline-s", type=float, default=0, help="stop starting new compiles after this many seconds")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from", dest="from_file", type=Path, help="only print the table of a stored --out file")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.device, args.size)))
        return 0
    if args.from_file:
        print(report(json.loads(args.from_file.read_text())["rows"]))
        return 0
    jobs = [(w, s) for _ in range(args.repeats) for w in args.workloads.split(",") for s in args.settings.split(",")]
    rows: list[dict] = []
    started = time.monotonic()

    def task(job):
        if args.deadline_s and time.monotonic() - started > args.deadline_s:
            return None
        if args.paired:
            with ThreadPoolExecutor(max_workers=2) as pair:
                first, second = pair.map(lambda _: run_one(*job, args), range(2))
            row = dict(first)
            if "error" not in first and "error" not in second:
                row["reference"] = {k: v for k, v in second.items() if k != "phases"}
                row["ratio"] = first["compile_time_s"] / second["compile_time_s"]
            elif "error" in second:
                row["error"] = second["error"]
        else:
            row = run_one(*job, args)
        row["concurrent"] = args.concurrent
        print(json.dumps({k: v for k, v in row.items() if k != "phases"}), flush=True)
        return row

    with ThreadPoolExecutor(max_workers=args.concurrent) as pool:
        rows = [r for r in pool.map(task, jobs) if r is not None]
    if args.out:
        args.out.write_text(json.dumps({"argv": sys.argv[1:], "rows": rows}, indent=1))
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
