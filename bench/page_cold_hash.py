"""N cold requests of each page given (the page cache emptied before each): wall and this
process's CPU median / p95 and the HTML's sha1, to alternate a checkout of main and a branch on one
``dashboard_load --keep`` database (the same sha1: byte for byte the same page; the CPU time is
less moved by other work on shared cores than the wall time).

    DATABASE_URL=postgres://... PYTHONHASHSEED=0 python -m bench.page_cold_hash LABEL N URL [URL ...]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time

from bench.dashboard_load import percentile, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("label", help="the checkout timed (main, branch): the rows' first column")
    parser.add_argument("n", type=int, help="cold requests per page")
    parser.add_argument("urls", nargs="+", metavar="URL")
    args = parser.parse_args()
    setup_django(os.environ["DATABASE_URL"], tempfile.mkdtemp(prefix="ptbench-static."))
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    call_command("collectstatic", interactive=False, verbosity=0)
    label, n, urls, client = args.label, args.n, args.urls, Client()
    for url in urls:
        for _ in range(2):
            cache.clear()
            client.get(url)
        wall, cpu = [], []
        for _ in range(n):
            cache.clear()
            started_cpu, started = time.process_time(), time.perf_counter()
            response = client.get(url)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
        print(f"{label:<8}{url[:60]:<62}{n:>4}{percentile(wall, 0.5):>9.1f}{percentile(wall, 0.95):>9.1f}"
              f"{percentile(cpu, 0.5):>9.1f}{percentile(cpu, 0.95):>9.1f}  {response.status_code} {hashlib.sha1(response.content).hexdigest()[:12]}",
              flush=True)


if __name__ == "__main__":
    main()
