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

    python bench/compile_noise.py --workloads masked_attention,bert_encoder,llama_decode \
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


def child(workload_name: str, device: str, size: str) -> dict:
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
    self_before, children_before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe)
    wall = time.perf_counter() - started
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
    return f"{100 * (max(values) - min(values)) / m:5.1f}%  sd {100 * statistics.stdev(values) / statistics.mean(values):4.1f}%"


def report(rows: list[dict]) -> str:
    lines = [f"{'workload':18} {'setting':10} {'n':>2} {'wall median':>11}  wall range/sd         "
             f"{'cpu median':>10}  cpu range/sd          at fixed host speed (sidecar) range/sd  sidecar ms"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        if "error" not in row:
            groups.setdefault((row["workload"], row["setting"]), []).append(row)
    for (workload, setting), group in sorted(groups.items()):
        walls = [r["compile_time_s"] for r in group]
        cpus = [r["cpu_self_s"] + r["cpu_children_s"] for r in group]
        probes = [((r.get("sidecar") or {}).get("host_probe_ms") or {}).get("median") for r in group]
        if all(probes):  # seconds at the speed of a host whose probe takes 1 ms
            normal, probe_range = [w / p for w, p in zip(walls, probes)], f"{min(probes):.2f}-{max(probes):.2f}"
        else:
            normal, probe_range = [], "-"
        lines.append(f"{workload:18} {setting:10} {len(group):>2} {statistics.median(walls):10.2f}s  {spread(walls):20}  "
                     f"{statistics.median(cpus):9.2f}s  {spread(cpus):20}  {spread(normal):38}  {probe_range}")
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
