"""``dashboard_load.py --concurrent N``: N clients at once against a real server (gunicorn, as
docker-compose serves the dashboard), each page's client-side latency as p50 / p95, with the page
cache off (PTBENCH_PAGE_CACHE_SECONDS=0), cold and on. Cold: the cache on, and the data's fingerprint
changed (``invalidate``: as an ingest changes it) before each round of N requests at once, so every
round arrives as the first requests after an ingest do. With CELERY_BROKER_URL set to a Redis, the
workers share the page cache there (dashboard/settings.py CACHES), as docker-compose's do."""
from __future__ import annotations

import concurrent.futures
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(*, cache_seconds: int, workers: int) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "PTBENCH_PAGE_CACHE_SECONDS": str(cache_seconds)}
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "dashboard.wsgi", "--bind", f"127.0.0.1:{port}",
                               "--workers", str(workers), "--log-level", "error"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/", timeout=30)
            break
        except OSError as exc:
            if getattr(exc, "code", None):  # any HTTP answer: it is up
                break
            time.sleep(0.2)
    return server, base


def _get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        assert response.status == 200, (url, response.status)
    return (time.perf_counter() - started) * 1000


def _hammer(urls: list[str], *, clients: int, per_client: int) -> list[float]:
    jobs = [urls[i % len(urls)] for i in range(clients * per_client)]
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        return list(pool.map(_get, jobs))


def concurrent_report(pages: list[tuple[str, list[str]]], *, clients: int, per_client: int, workers: int, percentile,
                      invalidate=None) -> str:
    """pages: (name, paths). Returns the table; prints each line as it is measured. ``invalidate``
    (given: a 'cold' row per page): makes every cached page stale, as an ingest does."""
    lines = [f"# {clients} concurrent clients x {per_client} requests per page, gunicorn --workers {workers} on "
             f"{os.cpu_count()} CPUs; client-side latency (HTTP over loopback), after one warm-up request per path; page cache: "
             + ("Redis, shared by the workers (CELERY_BROKER_URL)" if os.environ.get("CELERY_BROKER_URL", "").startswith(("redis://", "rediss://"))
                else "each worker's memory (no Redis broker set)"),
             f"{'page':<34}{'page cache':>11}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'req/s':>8}"]
    print("\n".join(lines), flush=True)
    modes = [("off", 0), *([("cold", 60)] if invalidate else []), ("on", 60)]
    for mode, cache_seconds in modes:
        server, base = _serve(cache_seconds=cache_seconds, workers=workers)
        try:
            for name, paths in pages:
                urls = [base + p for p in paths]
                for url in urls:
                    _get(url)
                started = time.perf_counter()
                if mode == "cold":  # each round: N requests at once, the first after the data changed
                    times = []
                    for _ in range(per_client):
                        invalidate()
                        times += _hammer(urls, clients=clients, per_client=1)
                else:
                    times = _hammer(urls, clients=clients, per_client=per_client)
                rate = len(times) / (time.perf_counter() - started)
                line = (f"{name:<34}{mode:>11}{percentile(times, 0.5):>9.0f}"
                        f"{percentile(times, 0.95):>9.0f}{max(times):>9.0f}{rate:>8.1f}")
                print(line, flush=True)
                lines.append(line)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return "\n".join(lines)
