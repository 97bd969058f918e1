"""How long a case process outlives its runner (issue #35, docs/runner-processes.md).

Runs ``python -m runner run`` of a case that starts a child and sleeps (the test workload
``tests.runner.fault_workloads:SpawnsAndSleeps``, eager, CPU), stops the runner mid-case by SIGKILL
(no handler runs: PR_SET_PDEATHSIG, then the sentinel) or SIGTERM (the runner's handler), and times
until no process carrying the run's mark is left (polled every 10 ms), ``--repeats`` times each.

    python bench/case_lifetime.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("PTBENCH_WORKLOAD_MODULES", "tests.runner.fault_workloads")

from tests.runner.case_processes import FAULTS, case_processes, sleeper_started, start_runner, wait_for  # noqa: E402


def one(signum: int, folder: Path) -> float:
    runner, mark = start_runner(f"{FAULTS}:SpawnsAndSleeps", out=folder / f"run-{time.monotonic_ns()}.json")
    try:
        wait_for(lambda: sleeper_started(mark), timeout=120, what="the case to start its child")
    finally:
        os.kill(runner.pid, signum)
        stopped = time.monotonic()
    try:
        while case_processes(mark):  # the runner may still be exiting (SIGTERM): not waited for here
            if time.monotonic() - stopped > 60:
                raise SystemExit(f"case processes of {mark} still there after 60 s")
            time.sleep(0.01)
        return time.monotonic() - stopped
    finally:
        runner.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptbench-lifetime-") as folder:
        for signum in (signal.SIGKILL, signal.SIGTERM):
            times = [one(signum, Path(folder)) for _ in range(args.repeats)]
            print(f"{signal.Signals(signum).name:8} runner: case and its child gone after median {statistics.median(times) * 1000:.0f} ms "
                  f"(max {max(times) * 1000:.0f} ms, {len(times)} runs)")


if __name__ == "__main__":
    main()
