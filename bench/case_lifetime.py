"""How long a case process outlives its runner (issue #35, docs/runner-processes.md).

Runs ``python -m runner run`` of a case that starts a child and sleeps (the test workload
``tests.runner.fault_workloads:SpawnsAndSleeps``, eager, CPU), stops the runner mid-case by SIGKILL
(no handler runs: PR_SET_PDEATHSIG, then the sentinel) or SIGTERM (the runner's handler), and times
until no process carrying the run's mark is left (polled every 10 ms), ``--repeats`` times each.

    python -m bench.case_lifetime [--repeats 5] [--device cuda]
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PTBENCH_WORKLOAD_MODULES", "tests.runner.fault_workloads")

from tests.runner.case_processes import FAULTS, case_processes, sleeper_started, start_runner, wait_for


def gpu_memory_used_mib() -> int:
    """GPU 0's memory in use, as nvidia-smi reads it (every process's, this bench's none)."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def one(signum: int, folder: Path, device: str) -> tuple[float, float | None, int | None]:
    """Seconds until the case processes are gone; on cuda, also until GPU 0's memory is back to
    what it was before the run (within 16 MiB), and how much the case held (MiB)."""
    before = gpu_memory_used_mib() if device == "cuda" else None
    runner, mark = start_runner(f"{FAULTS}:SpawnsAndSleeps", out=folder / f"run-{time.monotonic_ns()}.json", device=device)
    try:
        wait_for(lambda: sleeper_started(mark), timeout=120, what="the case to start its child")
        held = gpu_memory_used_mib() - before if device == "cuda" else None
    finally:
        os.kill(runner.pid, signum)
        stopped = time.monotonic()
    gone = freed = None
    try:
        while gone is None or (device == "cuda" and freed is None):  # the runner may still be exiting: not waited for
            now = time.monotonic() - stopped
            if now > 60:
                raise SystemExit(f"case processes of {mark} or their GPU memory still there after 60 s")
            if gone is None and not case_processes(mark):
                gone = now
            if device == "cuda" and freed is None and gpu_memory_used_mib() <= before + 16:
                freed = now
            time.sleep(0.01)
        return gone, freed, held
    finally:
        runner.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="cuda: also time GPU 0's memory coming back")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptbench-lifetime-") as folder:
        for signum in (signal.SIGKILL, signal.SIGTERM):
            runs = [one(signum, Path(folder), args.device) for _ in range(args.repeats)]
            gone = [r[0] for r in runs]
            line = (f"{signal.Signals(signum).name:8} runner ({args.device}): case and its child gone after median "
                    f"{statistics.median(gone) * 1000:.0f} ms (max {max(gone) * 1000:.0f} ms, {len(runs)} runs)")
            if args.device == "cuda":
                freed = [r[1] for r in runs]
                line += (f"; the {statistics.median(r[2] for r in runs):.0f} MiB it held on the GPU free after median "
                         f"{statistics.median(freed) * 1000:.0f} ms (max {max(freed) * 1000:.0f} ms)")
            print(line, flush=True)


if __name__ == "__main__":
    main()
