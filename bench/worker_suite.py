"""Runs through the real distributed path, on one machine: Redis, the dashboard (SQLite), its
Celery worker, and N runner workers (one per GPU with --gpus, pinned with CUDA_VISIBLE_DEVICES).
It requests one run per build, waits, prints the wall time and who ran what, checks that no case
ran or was stored twice, and exports each run's document into OUT.

    # the release history on this CPU machine (issue #4's sample dataset):
    python -m bench.worker_suite --out bench/results/releases --workers 2 --machine-class cpu --size tiny \\
        --builds /work/builds/torch-2.11.0/bin/python,/work/builds/torch-2.12.1/bin/python,...
    # the GPU machine, one worker per GPU:
    python -m bench.worker_suite --out $OUT --gpus 2 --machine-class gpu-h200 --size full --workloads ... --modes default

Needs redis-server (``--redis-server PATH``) and the dashboard's packages in this interpreter; the
builds need only torch (and numpy).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.dashboard_load import free_port

ROOT = Path(__file__).resolve().parents[1]


def names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, help="runner workers (default: --gpus, else 1)")
    parser.add_argument("--gpus", type=int, default=0, help="one worker per GPU, pinned with CUDA_VISIBLE_DEVICES")
    parser.add_argument("--builds", type=names, default=[sys.executable], help="comma-separated interpreters, one run each")
    parser.add_argument("--machine-class", required=True)
    parser.add_argument("--size", default="tiny", choices=["tiny", "full"])
    parser.add_argument("--workloads", type=names)
    parser.add_argument("--modes", type=names)
    parser.add_argument("--regimes", type=names)
    parser.add_argument("--dtypes", type=names)
    parser.add_argument("--backend", default="inductor", choices=["inductor", "eager", "aot_eager"],
                        help="the cases' backend (eager: the path without a compile, as the CPU test runs it)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--deadline", type=float, default=24 * 3600, help="give up after this many seconds")
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--label", default="", help="prefix of the exported file names")
    return parser.parse_args()


class Processes:
    def __init__(self, work: Path):
        self.work, self.started = work, []

    def start(self, name: str, command: list[str], env: dict) -> subprocess.Popen:
        log = open(self.work / f"{name}.log", "w")
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((name, process))
        return process

    def stop(self) -> None:
        for _, process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
        for _, process in self.started:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


def main() -> int:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="ptbench-workers."))
    redis_port = free_port()
    broker = f"redis://127.0.0.1:{redis_port}/0"
    env = {
        **os.environ, "DATABASE_URL": f"sqlite:///{work}/db.sqlite3", "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": f"redis://127.0.0.1:{redis_port}/1", "DJANGO_SECRET_KEY": "bench-only",
        "DJANGO_DEBUG": "false", "DJANGO_SECURE_SSL_REDIRECT": "false", "DJANGO_SETTINGS_MODULE": "dashboard.settings",
        "PYTHONUNBUFFERED": "1",
    }
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "DJANGO_SECRET_KEY",
                                           "DJANGO_DEBUG", "DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SETTINGS_MODULE")})
    processes = Processes(work)
    try:
        processes.start("redis", [args.redis_server, "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                                  "--appendonly", "no"], env)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        processes.start("dashboard-worker", [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q",
                                             "ingest,analysis,alerts", "--concurrency", "1", "-l", "info"], env)
        count = args.workers or args.gpus or 1
        runner_env = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
        runner_env.update(PTBENCH_BROKER_URL=broker, PTBENCH_MACHINE_CLASS=args.machine_class, PTBENCH_BUILDS=",".join(args.builds))
        for index in range(count):
            pinned = {"CUDA_VISIBLE_DEVICES": str(index)} if args.gpus else {}
            # cases at once: the worker's own (PTBENCH_CASES_AT_ONCE, else from its GPU: runner.worker.slots)
            processes.start(f"runner-{index}", [sys.executable, "-m", "celery", "-A", "runner.worker.app", "worker", "-Q",
                                                args.machine_class, "--hostname", f"w{index}@%h", "-l", "info"],
                            {**runner_env, **pinned})
        return measure(args, work, count)
    finally:
        processes.stop()
        print(f"logs in {work}")


def measure(args: argparse.Namespace, work: Path, workers: int) -> int:
    import django

    django.setup()
    from dashboard.dispatch.models import BuildEnvironment, CaseTask
    from dashboard.dispatch.services import run_request
    from dashboard.results.export import run_document
    from dashboard.results.models import Result, Run

    deadline = time.monotonic() + 600
    while BuildEnvironment.objects.filter(machine_class=args.machine_class).count() < len(args.builds):
        if time.monotonic() > deadline:
            print("the workers did not report every build; see the runner logs", file=sys.stderr)
            return 1
        time.sleep(1)
    by_python = {row.python: row.build for row in BuildEnvironment.objects.select_related("build")}
    runs = []
    started = time.time()
    for python in args.builds:
        build = by_python[os.path.realpath(python)] if os.path.realpath(python) in by_python else by_python[python]
        run = run_request(build=build, machine_class=args.machine_class, size=args.size, requested_by="bench/worker_suite.py",
                          workloads=args.workloads, modes=args.modes, regimes=args.regimes, dtypes=args.dtypes, timeout_s=args.timeout,
                          backend=args.backend)
        runs.append(run)
        print(f"run {run.id}: {run.cases_expected} cases of {build}", flush=True)
    open_states = CaseTask.OPEN_STATES
    give_up = time.monotonic() + args.deadline
    while CaseTask.objects.filter(run__in=runs, state__in=open_states).exists() and time.monotonic() < give_up:
        time.sleep(2)
    wall = time.time() - started
    print(f"\n{workers} worker(s), {len(runs)} run(s): wall {wall:.0f} s from the first request to the last case stored")
    print(f"{'run':38} {'build':28} {'cases':>5} {'stored':>6} {'attempts>1':>10}  per worker / statuses")
    duplicates = 0
    for run in runs:
        run = Run.objects.get(pk=run.id)
        cases = list(CaseTask.objects.filter(run=run))
        stored = Result.objects.filter(run=run).count()
        duplicates += stored - len({c.result_id for c in cases if c.result_id})
        per_worker = Counter(c.worker.split("@")[0] for c in cases)
        statuses = Counter(Result.objects.filter(run=run).values_list("status", flat=True))
        print(f"{run.id!s:38} {str(run.build)[:28]:28} {len(cases):>5} {stored:>6} {sum(c.attempts > 1 for c in cases):>10}  "
              f"{dict(per_worker)} {dict(statuses)} -> {run.status}")
        durations = [(c.finished_at - c.started_at).total_seconds() for c in cases if c.finished_at and c.started_at]
        print(f"{'':38} case wall: sum {sum(durations):.0f} s, max {max(durations, default=0):.0f} s; "
              f"{stored / max(wall, 1e-9) * 3600 / max(args.gpus or workers, 1):.1f} cases per {'GPU' if args.gpus else 'worker'}-hour")
        starts = [r.environment.get("case_process") or {} for r in Result.objects.filter(run=run)]
        forked = [s["start_s"] for s in starts if s.get("started_by") == "warm fork"]
        fresh = [s["start_s"] for s in starts if s.get("started_by") == "subprocess"]
        print(f"{'':38} case processes: {len(forked)} forked (median start {statistics.median(forked) if forked else 0:.2f} s), "
              f"{len(fresh)} fresh (median start {statistics.median(fresh) if fresh else 0:.2f} s)")
        name = f"{args.label}{args.machine_class}-torch{run.build.torch_version.replace('+', '-')}-{args.size}.json"
        (args.out / name).write_text(json.dumps(run_document(run=run), indent=1) + "\n")
    print(f"results stored twice: {duplicates}")
    return 0 if duplicates == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
