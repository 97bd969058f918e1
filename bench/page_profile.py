"""Where one cold page spends its time on a ``dashboard_load --keep`` database: its queries by time
and a cProfile of the project's functions and the templates.

    DATABASE_URL=postgres://... python -m bench.page_profile [/path/]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time

from bench.dashboard_load import setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default="/", help="the page's path and query")
    args = parser.parse_args()
    setup_django(os.environ["DATABASE_URL"], tempfile.mkdtemp(prefix="ptbench-static."))
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    call_command("collectstatic", interactive=False, verbosity=0)
    client, url = Client(), args.url
    for _ in range(3):
        cache.clear()
        assert client.get(url).status_code == 200
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        client.get(url)
        total = (time.perf_counter() - started) * 1000
    sql = sum(float(q["time"]) for q in queries.captured_queries) * 1000
    print(f"{url} cold: {total:.1f} ms, {len(queries.captured_queries)} queries, {sql:.1f} ms of them in SQL")
    for q in sorted(queries.captured_queries, key=lambda q: -float(q["time"]))[:10]:
        print(f"  {float(q['time']) * 1000:7.1f} ms  {q['sql'][:150]}")
    cache.clear()
    profile = cProfile.Profile()
    profile.enable()
    client.get(url)
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(r"dashboard|template", 45)
    print(out.getvalue())


if __name__ == "__main__":
    main()
