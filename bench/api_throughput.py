"""API benchmark through the real HTTP stack (gunicorn on loopback, DEBUG off, PostgreSQL):

1. verdict latency: ``GET /api/v1/verdict/`` over a 1,000,000-result history (the synthetic nightly
   history of ``bench/dashboard_load.py``, its newest builds run through regression detection),
   median and p95 per request.
2. bulk submit throughput, into that same database: run documents posted to
   ``POST /api/v1/runs/submit/`` by concurrent clients (the CI client's own urllib code); results
   stored per second, end to end, with regression detection off (a Celery worker's job in
   production) and inline (no broker: the request waits for it).

    python -m bench.api_throughput [--runs 40] [--cases 500] [--clients 1,2] [--workers 2]
                                   [--results 1000000] [--verdicts 50] [--out FILE]

Starts a throwaway PostgreSQL cluster on a free loopback port (as scripts/test.sh does; with
DATABASE_URL set it uses that database and drops nothing). Every row it writes is synthetic.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from bench.lib.dashboard_history import History
from bench.dashboard_load import Cluster, free_port, percentile, setup_django
from bench.ingest_throughput import synthetic_document

from runner.ci import Client

ROOT = Path(__file__).resolve().parent.parent


class Server:
    """gunicorn serving the dashboard on loopback, configured like production (DEBUG off)."""

    def __init__(self, database_url: str, static_root: str, workers: int, detect: bool):
        self.port = free_port()
        env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "dashboard.settings", "DJANGO_DEBUG": "false",
               "DJANGO_SECRET_KEY": "bench-only", "DJANGO_SECURE_SSL_REDIRECT": "false", "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
               "DJANGO_STATIC_ROOT": static_root, "DJANGO_LOG_LEVEL": "ERROR", "DETECT_AFTER_INGEST": str(detect).lower()}
        env.pop("CELERY_BROKER_URL", None)  # no broker: tasks (detection) run in-process
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "dashboard.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--timeout", "600", "--log-level", "warning"],
            cwd=ROOT, env=env,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/api/v1/", timeout=5).read()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def bench_submit(*, url: str, secret: str, runs: int, cases: int, clients: int, tag: str) -> dict:
    """Post ``runs`` documents of ``cases`` results each (distinct builds, one suite), ``clients`` at a time."""
    documents = [json.dumps(synthetic_document(cases=cases, sha=uuid.uuid4().hex + tag.encode().hex()[:8])).encode() for _ in range(runs)]
    client = Client(url, token=secret, timeout=600)
    warm = json.dumps(synthetic_document(cases=cases, sha=uuid.uuid4().hex + "00000000")).encode()
    client.call("POST", "/runs/submit/", body=warm)  # workloads, configs and series exist after this one

    def post(raw: bytes) -> float:
        started = time.perf_counter()
        status, outcome = client.call("POST", "/runs/submit/", body=raw)
        assert status == 201 and outcome["results_created"] == cases, (status, outcome)
        return time.perf_counter() - started

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(post, documents))
    wall = time.perf_counter() - started
    return {"clients": clients, "runs": runs, "cases": cases, "bytes": statistics.mean(len(d) for d in documents),
            "wall": wall, "per_s": runs * cases / wall, "median": statistics.median(latencies), "p95": percentile(latencies, 0.95)}


def load_history(results: int, report, *, workloads: int = 80) -> History:
    history = History(results=results, workloads=workloads, seed=5)
    history.load(report=report)
    return history


def detect_latest(history: History, builds: int, report) -> list:
    """Regression detection over the newest runs of the first machine class, as after their ingest."""
    from dashboard.pipeline.tasks import detect_run
    from dashboard.results.models import Run

    runs = list(Run.objects.filter(machine__machine_class=history.machine_classes[0], status="completed")
                .select_related("build").order_by("-build__ordered_at")[:builds])
    started = time.perf_counter()
    for run in runs:
        detect_run(str(run.id))
    report(f"detection over the newest {len(runs)} runs of {history.machine_classes[0]}", started)
    return [run.build for run in runs]


def bench_verdicts(*, url: str, builds: list, machine_class: str, repeat: int, baseline=None) -> dict:
    from dashboard.results.selectors.common import build_ref

    client = Client(url, timeout=600)
    params = [{"build": build_ref(b), "machine_class": machine_class} for b in builds]
    if baseline is not None:
        for p in params:
            p["baseline"] = build_ref(baseline)
    for p in params[:3]:
        client.call("GET", "/verdict/", params=p)  # warm-up: connections, plans
    times, answers = [], {}
    for i in range(repeat):
        p = params[i % len(params)]
        started = time.perf_counter()
        _, verdict = client.call("GET", "/verdict/", params=p)
        times.append((time.perf_counter() - started) * 1000)
        answers[verdict["reason"]] = answers.get(verdict["reason"], 0) + 1
    return {"n": repeat, "builds": len(params), "median": statistics.median(times), "p95": percentile(times, 0.95),
            "max": max(times), "answers": answers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="documents per submit measurement")
    parser.add_argument("--cases", type=int, default=500, help="results per document")
    parser.add_argument("--clients", default="1,2", help="concurrent submitting clients, comma-separated")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--results", type=int, default=1_000_000, help="history size for the verdict")
    parser.add_argument("--workloads", type=int, default=80, help="workloads of the history (fewer: a smaller one per build)")
    parser.add_argument("--verdicts", type=int, default=50, help="timed verdict requests per row")
    parser.add_argument("--detect-builds", type=int, default=5, help="newest builds run through detection first")
    parser.add_argument("--skip-submit", action="store_true")
    parser.add_argument("--skip-verdict", action="store_true")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()
    load_at_start = os.getloadavg()  # the machine may be shared: say how busy it was

    def report(label: str, started: float) -> float:
        now = time.perf_counter()
        print(f"  {label}: {now - started:.1f} s", flush=True)
        return now

    cluster = None
    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        cluster = Cluster()
        database_url = cluster.start()
    static_root = tempfile.mkdtemp(prefix="ptbench-static.")
    servers: list[Server] = []
    submit_rows, verdict_rows, notes = [], [], []
    try:
        setup_django(database_url, static_root)
        from django.core.management import call_command

        from dashboard.api.services import api_token_create

        call_command("migrate", verbosity=0)
        secret = api_token_create(name=f"bench-{uuid.uuid4().hex[:6]}")[1]
        if not args.skip_verdict:
            print(f"== {args.results:,} synthetic results", flush=True)
            history = load_history(args.results, report, workloads=args.workloads)
            from dashboard.results.models import Result

            count = Result.objects.count()
            builds = detect_latest(history, args.detect_builds, report)
            server = Server(database_url, static_root, args.workers, detect=False)
            servers.append(server)
            mc = history.machine_classes[0]
            print("== verdicts", flush=True)
            verdict_rows.append(("against the previous build (detected)", bench_verdicts(url=server.url, builds=builds, machine_class=mc,
                                                                                         repeat=args.verdicts)))
            from dashboard.results.models import BuildSummary

            back = min(30, BuildSummary.objects.filter(machine_class=mc).count() - 1)
            oldest = BuildSummary.objects.filter(machine_class=mc).order_by("-ordered_at")[back].build
            verdict_rows.append((f"against a named baseline {back} builds back", bench_verdicts(
                url=server.url, builds=builds, machine_class=mc, repeat=5, baseline=oldest)))
            undetected = [s.build for s in BuildSummary.objects.filter(machine_class=mc).order_by("-ordered_at")[args.detect_builds:args.detect_builds + 10]]
            verdict_rows.append(("a build detection has not reached", bench_verdicts(url=server.url, builds=undetected, machine_class=mc,
                                                                                    repeat=args.verdicts)))
            for label, row in verdict_rows:
                print(f"  {label}: median {row['median']:.1f} ms, p95 {row['p95']:.1f} ms {row['answers']}", flush=True)
            notes.append(f"{count:,} results in the database for the verdict rows")
        if not args.skip_submit:
            for detect in (False, True):
                server = Server(database_url, static_root, args.workers, detect=detect)
                servers.append(server)
                for clients in [int(c) for c in args.clients.split(",")]:
                    print(f"== submit: {max(4, args.runs // 4) if detect else args.runs} x {args.cases} results, {clients} client(s), detection {'inline' if detect else 'off'}",
                          flush=True)
                    runs = max(4, args.runs // 4) if detect else args.runs  # inline detection is slow: fewer documents
                    row = bench_submit(url=server.url, secret=secret, runs=runs, cases=args.cases, clients=clients,
                                       tag=f"{int(detect)}{clients}")
                    row["detect"] = detect
                    submit_rows.append(row)
                    print(f"  {row['per_s']:.0f} results/s, median {row['median'] * 1e3:.0f} ms per document", flush=True)
                server.stop()
                servers.remove(server)
        notes.append("load average (1, 5, 15 min) at start {:.1f} {:.1f} {:.1f}, at end {:.1f} {:.1f} {:.1f}".format(
            *load_at_start, *os.getloadavg()))
        table = render(args, submit_rows, verdict_rows, notes)
        print(table)
        if args.out:
            Path(args.out).write_text(table + "\n")
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(static_root, ignore_errors=True)
        if cluster:
            cluster.stop()


def render(args, submit_rows: list[dict], verdict_rows: list, notes: list[str]) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("select version()")
        version = cursor.fetchone()[0].split(" on ")[0]
    command = " ".join(["python -m bench.api_throughput", *sys.argv[1:]])
    lines = [
        f"# {command}",
        f"# {dt.date.today()} · {platform.node() or 'host'} · {os.cpu_count()} CPUs · {version} · Python {platform.python_version()}",
        f"# gunicorn {args.workers} sync workers on loopback, DEBUG off; clients: runner.ci's urllib client; PostgreSQL on the same host",
    ]
    if submit_rows:
        lines += ["", "bulk submit: POST /api/v1/runs/submit/ (validate + store through run_ingest, all or nothing per document)",
                  f"{'detection':<12}{'clients':>8}{'documents':>10}{'results/doc':>12}{'kB/doc':>8}{'results/s':>11}"
                  f"{'median s/doc':>13}{'p95 s/doc':>10}"]
        for r in submit_rows:
            lines.append(f"{'inline' if r['detect'] else 'off':<12}{r['clients']:>8}{r['runs']:>10}{r['cases']:>12}{r['bytes'] / 1e3:>8.0f}"
                         f"{r['per_s']:>11.0f}{r['median']:>13.2f}{r['p95']:>10.2f}")
    if verdict_rows:
        lines += ["", "verdict: GET /api/v1/verdict/ (client-observed, one request at a time)",
                  f"{'verdict of':<42}{'requests':>9}{'median ms':>10}{'p95 ms':>8}{'max ms':>8}  answers"]
        for label, r in verdict_rows:
            lines.append(f"{label:<42}{r['n']:>9}{r['median']:>10.1f}{r['p95']:>8.1f}{r['max']:>8.1f}  "
                         + ", ".join(f"{k} x{v}" for k, v in sorted(r["answers"].items())))
    lines += [f"# {n}" for n in notes]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
