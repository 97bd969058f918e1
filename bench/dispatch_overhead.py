"""Dispatch overhead per case, through the real distributed path on this machine: a throwaway
PostgreSQL (``dashboard_load.Cluster``) and Redis, the dashboard-side Celery worker and one runner
worker (``celery -A runner.worker.app``, no Django), started as in docker-compose.yml.

    python -m bench.dispatch_overhead [--cases 20] [--warmup 2] [--out FILE]

Each case is requested on its own (one-case runs, one after another), so it always finds the
runner worker idle, and uses the ``eager`` backend on ``tests.runner.sample_workloads:TinyMLP``:
the measurement itself is not under test. Per case, from wall clocks of the one machine:

- request -> taken: ``run_request`` called (plan, store, send after commit) -> the worker's task
  began (``taken_at``, which the worker records in the result's ``environment.worker``);
- request -> shown running: -> the dashboard stored the worker's "started" message (CaseTask.started_at);
- handed over -> stored: the worker handed the result document to Redis (``handed_over_at``) ->
  the dashboard worker validated and stored it and closed the case (CaseTask.finished_at);
- handed over -> visible: -> a reader polling every ``--poll`` seconds saw the case done.

Regression detection is off in the dashboard worker (``DETECT_AFTER_INGEST=false``): with one case
per run it would run once per case, which a real run does once in all.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.dashboard_load import Cluster, free_port, percentile, setup_django
from bench.worker_suite import Processes

ROOT = Path(__file__).resolve().parent.parent

WORKLOAD = "tests.runner.sample_workloads:TinyMLP"
MACHINE_CLASS = "cpu-dispatch-bench"
# A module:Class workload is dispatched only from a catalog that an allowed module's entry names
# (contract.catalog): the tests' own (tests/catalog.json), for this process and the workers it starts.
os.environ.setdefault("PTBENCH_WORKLOAD_MODULES", WORKLOAD.partition(":")[0])
os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", str(ROOT / "tests" / "catalog.json"))


def wait_until(predicate, *, timeout: float, what: str, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")


def start_services(processes: Processes, *, broker: str, env: dict, machine_class: str = MACHINE_CLASS,
                   cuda_visible: str | None = "", detect: bool = False) -> None:
    """Redis, then the two workers with the commands of docker-compose.yml (``cuda_visible`` None: the
    runner worker sees the host's GPUs; ``detect``: the dashboard worker detects regressions)."""
    port = broker.rsplit(":", 1)[1].split("/")[0]
    processes.start("redis", ["redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no"], env)
    wait_until(lambda: subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True, text=True).stdout.strip() == "PONG",
               timeout=30, what="redis-server")
    processes.start("dashboard-worker", [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", "ingest,analysis,alerts",
                                         "--concurrency", "2", "-l", "info"], {**env, "DETECT_AFTER_INGEST": str(detect).lower()})
    runner_env = {k: v for k, v in env.items() if k != "DATABASE_URL" and not k.startswith("DJANGO_")}
    runner_env.update(PTBENCH_BROKER_URL=broker, PTBENCH_MACHINE_CLASS=machine_class)
    if cuda_visible is not None:
        runner_env["CUDA_VISIBLE_DEVICES"] = cuda_visible
    processes.start("runner-worker", [sys.executable, "-m", "celery", "-A", "runner.worker.app", "worker", "-Q", machine_class,
                                      "--concurrency", "1", "--hostname", "gpu0@%h", "-l", "info"], runner_env)


@contextlib.contextmanager
def services_up(*, prefix: str, machine_class: str, cuda_visible: str | None = "", detect: bool = False, env: dict | None = None):
    """A throwaway PostgreSQL (migrated, Django set up in this process) and Redis, the dashboard worker
    and one runner worker of ``machine_class`` (``start_services``); all stopped on the way out."""
    cluster = Cluster()
    database_url = cluster.start()
    static_root = tempfile.mkdtemp(prefix="ptbench-static.")
    broker = f"redis://127.0.0.1:{free_port()}/0"
    os.environ.update(CELERY_BROKER_URL=broker, CELERY_RESULT_BACKEND=broker.removesuffix("/0") + "/1")
    work = Path(tempfile.mkdtemp(prefix=prefix))
    processes = Processes(work)
    try:
        setup_django(database_url, static_root)  # also puts DATABASE_URL and DJANGO_* in os.environ
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        start_services(processes, broker=broker, env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
                       machine_class=machine_class, cuda_visible=cuda_visible, detect=detect)
        yield
    finally:
        processes.stop()
        cluster.stop()
        shutil.rmtree(static_root, ignore_errors=True)
        print(f"worker logs in {work}")


def one_case(build, *, poll: float, timeout: float) -> dict:
    """Request a one-case run and follow it to the stored result; the timestamps in seconds."""
    from dashboard.dispatch.models import CaseTask
    from dashboard.dispatch.services import run_request
    from dashboard.results.models import Result

    requested = time.time()
    run = run_request(build=build, machine_class=MACHINE_CLASS, size="tiny", requested_by="bench/dispatch_overhead.py",
                      workloads=[WORKLOAD], modes=["default"], regimes=["static"], dtypes=["float32"], backend="eager")
    done = CaseTask.objects.filter(run=run, state__in=("done", "failed"))
    case = wait_until(lambda: done.first(), timeout=timeout, what=f"the case of run {run.id}", poll=poll)
    seen = time.time()
    if case.state != "done":
        raise RuntimeError(f"case {case.id} failed: {case.error}")
    worker = Result.objects.get(pk=case.result_id).environment["worker"]
    taken, handed_over = (dt.datetime.fromisoformat(worker[key]).timestamp() for key in ("taken_at", "handed_over_at"))
    return {"requested": requested, "taken": taken, "shown_running": case.started_at.timestamp(), "handed_over": handed_over,
            "stored": case.finished_at.timestamp(), "seen": seen, "attempts": case.attempts}

ROWS = [  # (label, from, to)
    ("request -> taken by the idle worker", "requested", "taken"),
    ("request -> shown running (dashboard)", "requested", "shown_running"),
    ("handed over -> stored, case closed", "handed_over", "stored"),
    ("handed over -> visible to a reader", "handed_over", "seen"),
    ("(the case itself: taken -> handed over)", "taken", "handed_over"),
    ("(end to end: request -> visible)", "requested", "seen"),
]


def table(samples: list[dict]) -> list[str]:
    lines = [f"{'per case (ms)':<42}{'n':>4}{'p50':>9}{'p95':>9}{'max':>9}"]
    for label, start, end in ROWS:
        values = [1000 * (s[end] - s[start]) for s in samples]
        lines.append(f"{label:<42}{len(values):>4}{percentile(values, 0.5):>9.0f}{percentile(values, 0.95):>9.0f}{max(values):>9.0f}")
    return lines


def versions() -> str:
    import celery
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        postgres = cursor.fetchone()[0].split()[0]
    redis = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v=")
    return f"PostgreSQL {postgres} · Redis {redis} · Celery {celery.__version__} · Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20, help="timed cases")
    parser.add_argument("--warmup", type=int, default=2, help="cases before timing (connections, imports)")
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between a reader's looks at the case")
    parser.add_argument("--timeout", type=float, default=300, help="seconds one case may take")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()
    load_at_start = os.getloadavg()

    with services_up(prefix="ptbench-dispatch.", machine_class=MACHINE_CLASS):
        from dashboard.dispatch.models import BuildEnvironment

        row = wait_until(lambda: BuildEnvironment.objects.filter(machine_class=MACHINE_CLASS).select_related("build").first(),
                         timeout=300, what="the runner worker's report of its builds", poll=0.5)
        print(f"runner worker up; build {row.build}", flush=True)
        samples = []
        for index in range(args.warmup + args.cases):
            sample = one_case(row.build, poll=args.poll, timeout=args.timeout)
            if index >= args.warmup:
                samples.append(sample)
            print(f"  case {index + 1}/{args.warmup + args.cases}: request -> taken {1000 * (sample['taken'] - sample['requested']):.0f} ms,"
                  f" handed over -> stored {1000 * (sample['stored'] - sample['handed_over']):.0f} ms", flush=True)
        assert all(s["attempts"] == 1 for s in samples)
        header = [
            f"# python -m bench.dispatch_overhead {' '.join(sys.argv[1:])}".rstrip(),
            f"# {dt.date.today()} · {platform.node()} · {os.cpu_count()} CPUs · {versions()}",
            f"# load average at start {load_at_start[0]:.2f} (the machine is shared with other jobs)",
            (f"# one runner worker (--concurrency 1) and the dashboard worker (--concurrency 2) on loopback; one-case runs"
             f" one after another ({WORKLOAD}, backend eager), {args.warmup} untimed first; reader polls every {args.poll * 1000:.0f} ms"),
            "",
        ]
        lines = header + table(samples)
        print("\n".join(lines))
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
        return 0

if __name__ == "__main__":
    sys.exit(main())
