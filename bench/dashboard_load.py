"""Dashboard load benchmark: server time of the pages over a large synthetic history.

    python -m bench.dashboard_load --results 1000000 [--repeat 30] [--out FILE] [--keep]
    python -m bench.dashboard_load --results 16000 --concurrent 20 --out FILE
    python -m bench.dashboard_load --results 1000000 --concurrent 20 --both --out FILE   (both tables, one database)

Starts a throwaway PostgreSQL cluster on a free loopback port (as scripts/test.sh does; with
DATABASE_URL set it uses that database instead and drops nothing), migrates it, generates a
nightly history of ``--results`` results labelled synthetic (Run.synthetic, workload category
"synthetic", run notes), loads it with COPY, fills the summary tables through the same function
ingest uses, then times each page through Django's test client (server time: URL routing, views,
queries, templates; DEBUG off, as in production) and prints median / p95 / page weight.
``--concurrent N``: instead, N clients at once against gunicorn, p50/p95 per page with the page
cache off and on (bench/lib/dashboard_concurrent.py).
``--keep`` leaves the cluster running and prints its DATABASE_URL (to browse the pages);
``DATABASE_URL=<that> ... --reuse`` times that database again without generating it anew (about two
minutes at 1,000,000 results): it only migrates it. The pages timed are drawn from their own
seeded generator, so a reused database is timed on the same pages as a fresh one.
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import os
import platform
import random
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.lib.dashboard_history import History

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl), owned by 'postgres' when we are root."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [int(x) for x in re.findall(r"\d+", str(p))])
        self.bin = found[-1] if found else Path(shutil.which("initdb") or "initdb").parent
        self.work = Path(tempfile.mkdtemp(prefix="ptbench-load."))
        self.work.chmod(0o755)
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = "postgres" if subprocess.run(["id", "-u", "postgres"], capture_output=True).returncode == 0 else "nobody"
            self.prefix = ["runuser", "-u", user, "--"]
            shutil.chown(self.work, user)
        self.port = free_port()

    def start(self) -> str:
        subprocess.run([*self.prefix, str(self.bin / "initdb"), "-D", str(self.work / "pg"), "-U", "ptbench", "--auth=trust",
                        "-E", "UTF8", "--locale=C.UTF-8"], check=True, capture_output=True)
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.work} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c shared_buffers=1GB -c maintenance_work_mem=512MB -c max_wal_size=8GB "
                   "-c checkpoint_timeout=30min")
        subprocess.run([*self.prefix, str(self.bin / "pg_ctl"), "-D", str(self.work / "pg"), "-l", str(self.work / "pg.log"),
                        "-w", "-o", options, "start"], check=True, capture_output=True)
        subprocess.run([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "ptbench", "ptbench"],
                       check=True, capture_output=True)
        return f"postgres://ptbench@127.0.0.1:{self.port}/ptbench"

    def stop(self) -> None:
        subprocess.run([*self.prefix, str(self.bin / "pg_ctl"), "-D", str(self.work / "pg"), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)


def setup_django(database_url: str, static_root: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="dashboard.settings", DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="bench-only", DJANGO_SECURE_SSL_REDIRECT="false", DJANGO_ALLOWED_HOSTS="testserver,127.0.0.1",
        DJANGO_STATIC_ROOT=static_root, DJANGO_LOG_LEVEL="ERROR",
    )
    import django

    django.setup()


def timed(label: str, started: float) -> float:
    now = time.perf_counter()
    print(f"  {label}: {now - started:.1f} s", flush=True)
    return now


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low, high = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def asset_sizes(html: str, static_root: Path) -> tuple[int, int]:
    """Raw and gzip bytes of the scripts and stylesheets a page loads from our static files."""
    raw = gz = 0
    for url in sorted(set(re.findall(r'(?:src|href)="/static/([^"]+\.(?:js|css))"', html))):
        path = static_root / url
        data = path.read_bytes()
        raw += len(data)
        packed = path.with_name(path.name + ".gz")
        gz += packed.stat().st_size if packed.exists() else len(gzip.compress(data, 6))
    return raw, gz


def measure(pages: list[tuple[str, list]], repeat: int, static_root: Path, budget: float = 60.0) -> list[dict]:
    """Each page ``repeat`` times; a page served through the page cache (overview, workload, compare,
    dynamic) twice: cold (the cache emptied before each request, as the first request after an
    ingest finds it) and warm (served from the cache, as every later request until the next
    ingest). The process's objects are frozen out of the garbage collector's walks first, as the
    server's are (``dashboard.server_gc``). A page of ``UNSTORED_PAGES``: the cache emptied and its stored noise bands dropped
    before each request (the first compare against a base whose bands were never stored)."""
    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from dashboard.server_gc import freeze_loaded

    freeze_loaded()  # as dashboard/wsgi.py does in each server process
    client = Client()
    rows = []
    for name, targets in pages:
        cached = name in CACHED_PAGES and settings.PAGE_CACHE_SECONDS
        unstored = UNSTORED_PAGES.get(name)
        for state in ("cold", "warm") if cached else ("",):
            warmups = targets if state == "warm" else targets[:3]  # connections, template and query-plan caches;
            started = time.perf_counter()  # warm: every path once into the page cache
            for k, target in enumerate(warmups):
                if k and time.perf_counter() - started > budget / 4:  # a very slow page: one warm-up request
                    break
                if state == "cold" or unstored:
                    cache.clear()
                if unstored:
                    unstored()
                with CaptureQueriesContext(connection) as first_queries:
                    target(client)
                if k == 0:
                    query_count = len(first_queries)
            times = []
            started = time.perf_counter()
            for i in range(repeat):
                if times and time.perf_counter() - started > budget:  # a very slow page: fewer requests (column n)
                    break
                target = targets[i % len(targets)]
                if state == "cold" or unstored:
                    cache.clear()
                if unstored:
                    unstored()
                begun = time.perf_counter()
                response = target(client)
                times.append((time.perf_counter() - begun) * 1000)
            if statistics.median(times) < 1000 or state == "warm":  # else the count of the first warm-up request
                if state == "cold" or unstored:
                    cache.clear()
                if unstored:
                    unstored()
                with CaptureQueriesContext(connection) as queries:
                    response = targets[0](client)
                query_count = len(queries)
            label = f"{name}, cache {state}" if state else name
            row = {"name": label, "median": statistics.median(times), "p95": percentile(times, 0.95), "max": max(times),
                   "queries": query_count, "n": len(times)}
            if hasattr(response, "content") and response.get("Content-Type", "").startswith("text/html"):
                assert response.status_code == 200, (name, response.status_code)
                html = response.content.decode()
                row["html"], row["html_gz"] = len(response.content), len(gzip.compress(response.content, 6))
                row["assets"], row["assets_gz"] = asset_sizes(html, static_root)
            rows.append(row)
            print(f"  {label}: median {row['median']:.1f} ms, p95 {row['p95']:.1f} ms", flush=True)
    return rows


# The pages served through dashboard.results.page_cache (timed cold and warm).
CACHED_PAGES = ("overview /", "workload /workloads/<name>/ (90d)", "workload, whole history (range=all)",
                "compare /compare/ (latest vs previous)", "compare, 10 random build pairs",
                "compare, filter=regressed sort=speedup", "backed vs unbacked /dynamic/ (90d)")
# Pages timed with their noise bands dropped before each request: name -> what drops them (page_targets).
UNSTORED_PAGES: dict = {}


def noise_bands_store(history: History, bases: list, report) -> None:
    """/compare/'s noise bands of the compared bases, stored as the pipeline stores them after each
    ingest (``regressions.noise_bands``: the new build's window), then home's judged cells of each
    class (``regressions.services.home_cells``), as that task does next; the bulk load bypasses ingest."""
    from dashboard.regressions.services.noise_bands import noise_bands_store as store

    started = time.perf_counter()
    computed = sum(store(machine_class=history.machine_classes[0], base=base) for base in bases)
    report(f"noise bands of {len(bases)} compared bases, as after their ingest ({computed} computed)", started)
    from dashboard.regressions.services.home_cells import home_cells_store

    started = time.perf_counter()
    judged = sum(home_cells_store(machine_class=machine_class) for machine_class in history.machine_classes)
    report(f"home's judged cells of {len(history.machine_classes)} classes, as after their ingest ({judged} judged)", started)
    from dashboard.regressions.services.compare_cells import compare_cells_store

    started = time.perf_counter()
    judged = sum(compare_cells_store(machine_class=machine_class) for machine_class in history.machine_classes)
    report(f"/compare/'s judged latest pair of {len(history.machine_classes)} classes, as after their ingest ({judged} judged)", started)
    from dashboard.results.services.latest_tables import latest_tables_store

    started = time.perf_counter()
    computed = sum(latest_tables_store(machine_class=machine_class) for machine_class in history.machine_classes)
    report(f"/'s tables of the latest builds of {len(history.machine_classes)} classes, as after their ingest ({computed} computed)",
           started)


def workload_sample(history: History, rng: random.Random) -> list[str]:
    """The workloads whose pages are timed: 10 (fewer in a tiny history)."""
    return rng.sample(history.workload_names, min(10, len(history.workload_names)))


def page_targets(history: History):
    from dashboard.regressions.models import CompareCellSet, HomeCellSet, NoiseBandSet
    from dashboard.results.models import BuildSummary, Series
    from dashboard.results.selectors.common import build_ref
    from dashboard.results.selectors.overview import overview_trend
    from dashboard.results.selectors.workloads import series_history

    rng = random.Random(history.seed)  # not the generator's: a reused database gets the same pages
    classes = history.machine_classes
    builds = list(BuildSummary.objects.filter(machine_class=classes[0]).select_related("build").order_by("ordered_at"))
    names = workload_sample(history, rng)
    pairs = [(build_ref(builds[i].build), build_ref(builds[j].build)) for i, j in
             (sorted(rng.sample(range(len(builds)), 2)) for _ in range(10))]
    # A head older than its base, inside its window (issue #46 item 13): the head's own bands (the pipeline's fill stores every build's)
    older = [(builds[i].build, builds[i - d].build) for i, d in ((rng.randrange(30, len(builds)), rng.randrange(1, 30)) for _ in range(5))
             ] if len(builds) > 30 else []
    series = list(Series.objects.filter(machine_class=classes[0]).order_by("?")[:20])
    latest = builds[-1]
    UNSTORED_PAGES["compare, noise bands not stored (computed)"] = lambda: (  # nor the judged pair (read without bands)
        NoiseBandSet.objects.filter(machine_class=classes[0], upto=builds[-2].build).delete(), CompareCellSet.objects.all().delete())
    # each pair's first request: the bands a request computed for a window of its own (the base's less the head) dropped
    UNSTORED_PAGES["compare, 5 heads older than their base"] = lambda: NoiseBandSet.objects.exclude(without=None).delete()
    UNSTORED_PAGES["compare /compare/, judged cells not stored (judged)"] = lambda: CompareCellSet.objects.all().delete()
    UNSTORED_PAGES["overview /, judged cells not stored (judged)"] = lambda: HomeCellSet.objects.all().delete()

    def get(url):
        return lambda client: client.get(url)

    def call(fn):
        return lambda client: fn()

    return [
        ("overview /", [get("/")]),
        ("overview /, judged cells not stored (judged)", [get("/")]),
        ("workload /workloads/<name>/ (90d)", [get(f"/workloads/{n}/") for n in names]),
        ("workload, whole history (range=all)", [get(f"/workloads/{n}/?range=all&mode=max-autotune&regime=unbacked") for n in names]),
        ("compare /compare/ (latest vs previous)", [get("/compare/")]),
        ("compare /compare/, judged cells not stored (judged)", [get("/compare/")]),
        ("compare, 10 random build pairs", [get(f"/compare/?machine={classes[0]}&base={b}&head={h}") for b, h in pairs]),
        ("compare, filter=regressed sort=speedup", [get(f"/compare/?machine={classes[0]}&base={b}&head={h}&filter=regressed&sort=speedup")
                                                   for b, h in pairs]),
        ("compare, noise bands not stored (computed)", [get("/compare/")]),
        *([("compare, 5 heads older than their base", [get(f"/compare/?machine={classes[0]}&base={build_ref(b)}&head={build_ref(h)}")
                                                       for b, h in older])] if older else []),
        ("trend query: one series, every build", [call(lambda s=s: series_history(series=s)) for s in series]),
        ("trend query: suite, 24 configs, 1 year", [call(lambda: overview_trend(machine_class=classes[0], since=latest.ordered_at - dt.timedelta(days=365)))]),
        ("backed vs unbacked /dynamic/ (90d)", [get("/dynamic/")]),
        ("run page /runs/<id>/ (1,920 cases)", [get(f"/runs/{builds[-2].latest_run_id}/")]),
        ("regressions board /regressions/", [get("/regressions/")]),
    ], [builds[-2].build] + [b.build for b in builds if build_ref(b.build) in {base for base, _ in pairs}] + [h for _, h in older]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--workloads", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=30, help="timed requests per page")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", help="also write the table to this file")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--reuse", action="store_true",
                        help="with DATABASE_URL: time the history already in that database (a --keep cluster's) instead of generating it")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of timed requests per page at most (at least one)")
    parser.add_argument("--concurrent", type=int, default=0, metavar="N", help="N clients at once against gunicorn")
    parser.add_argument("--both", action="store_true", help="--concurrent after the server-time table, on the same database")
    parser.add_argument("--per-client", type=int, default=10, help="--concurrent: requests per client and page")
    parser.add_argument("--workers", type=int, default=3, help="--concurrent: gunicorn workers (docker-compose: 3)")
    args = parser.parse_args()

    cluster = None
    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        cluster = Cluster()
        database_url = cluster.start()
    static_root = Path(tempfile.mkdtemp(prefix="ptbench-static."))
    try:
        setup_django(database_url, str(static_root))
        from django.core.management import call_command

        started = time.perf_counter()
        print(f"== {args.results:,} synthetic results into {database_url}", flush=True)
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        started = timed("migrate + collectstatic", started)
        history = History(results=args.results, workloads=args.workloads, seed=args.seed)
        reused = args.reuse and cluster is None and history.attach()
        if reused:
            print("  reused the history already in the database", flush=True)
        else:
            history.load(report=timed)
        generation_s = None if reused else time.perf_counter() - started
        print("== timing", flush=True)
        if args.concurrent and not args.both:
            table = concurrent_table(history, args, generation_s)
        else:
            pages, bases = page_targets(history)
            noise_bands_store(history, bases, timed)
            table = report(measure(pages, args.repeat, static_root, args.budget), args, history, generation_s)
            if args.concurrent:
                table += "\n\n" + concurrent_table(history, args, generation_s)
        print(table)
        if args.out:
            Path(args.out).write_text(table + "\n")
        if args.keep and cluster:
            print(f"cluster kept: DATABASE_URL={database_url} (stop: pg_ctl -D {cluster.work}/pg stop)")
            cluster = None
    finally:
        shutil.rmtree(static_root, ignore_errors=True)
        if cluster:
            cluster.stop()


def loaded(generation_s: float | None) -> str:
    return f"generated and loaded in {generation_s:.0f} s" if generation_s is not None else "the database of an earlier --keep run (--reuse)"


def concurrent_table(history: History, args, generation_s: float | None) -> str:
    from bench.lib.dashboard_concurrent import concurrent_report

    names = workload_sample(history, random.Random(history.seed))
    pages = [("overview /", ["/"]), ("workload /workloads/<name>/ (10)", [f"/workloads/{n}/" for n in names])]
    body = concurrent_report(pages, clients=args.concurrent, per_client=args.per_client, workers=args.workers, percentile=percentile,
                             invalidate=pages_invalidate)
    first = ("# the same database, then:" if args.both else
             f"# python -m bench.dashboard_load --results {args.results} --concurrent {args.concurrent} --per-client {args.per_client}"
             + (" --reuse" if args.reuse else ""))
    return (first + "\n"
            f"# {dt.date.today()} · {platform.node() or 'host'} · {os.cpu_count()} CPUs · {args.results:,} synthetic results "
            f"({loaded(generation_s)})\n" + body)


def pages_invalidate() -> None:
    """Every cached page stale in every server process, as an ingest makes them: the newest run's
    ``ingested_at`` moved to now changes the pages' data fingerprint (``results.page_cache``)."""
    from django.utils import timezone

    from dashboard.results.models import Run

    newest = Run.objects.order_by("-ingested_at").values_list("id", flat=True).first()
    Run.objects.filter(pk=newest).update(ingested_at=timezone.now())


def report(rows: list[dict], args, history: History, generation_s: float | None) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("select version()")
        version = cursor.fetchone()[0].split(" on ")[0]
        cursor.execute("select count(*) from results_result")
        count = cursor.fetchone()[0]
    lines = [
        f"# python -m bench.dashboard_load --results {args.results} --repeat {args.repeat} --budget {args.budget:g}"
        + (f" --concurrent {args.concurrent} --both" if args.concurrent else "") + (" --reuse" if args.reuse else ""),
        f"# {dt.date.today()} · {platform.node() or 'host'} · {os.cpu_count()} CPUs · {version} · Python {platform.python_version()}",
        f"# {count:,} results (synthetic): {len(history.machine_classes)} machine classes x {history.builds} nightly builds x "
        f"{len(history.workload_names)} workloads x {len(history.configs)} configs; {loaded(generation_s)}",
        "# server time through Django's test client (DEBUG off), after 3 warm-up requests; pages behind the page cache: "
        "cold = cache emptied before each request (the first request after an ingest), warm = served from it; "
        "page weight: HTML, and HTML + our static JS/CSS (plotly.min.js included) on a first visit",
        "# /compare/ reads the noise bands stored for its base (the pipeline stores the new build's after each ingest; "
        "stored here for the compared bases, the bulk load bypassing ingest); 'noise bands not stored': dropped before "
        "each request (with /compare/'s judged pair), as the first compare against a base that has none finds them; / reads "
        "home's judged cells and /compare/ its judged latest pair, stored after the bands (the pipeline's next step), "
        "'judged cells not stored': dropped before each request",
        "",
        f"{'page / query':<56}{'n':>4}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}{'queries':>8}{'HTML kB':>9}{'HTML gz':>9}{'+static kB':>11}{'+static gz':>11}",
    ]
    for r in rows:
        weight = ""
        if "html" in r:
            weight = (f"{r['html'] / 1e3:>9.1f}{r['html_gz'] / 1e3:>9.1f}{(r['html'] + r['assets']) / 1e3:>11.0f}"
                      f"{(r['html_gz'] + r['assets_gz']) / 1e3:>11.0f}")
        lines.append(f"{r['name']:<56}{r['n']:>4}{r['median']:>10.1f}{r['p95']:>9.1f}{r['max']:>9.1f}{r['queries']:>8}{weight}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
