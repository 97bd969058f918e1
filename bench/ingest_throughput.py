"""Ingest throughput: results stored per second through ``run_ingest`` on the configured database.

    python -m bench.ingest_throughput [--runs 20] [--cases 200]

Uses synthetic documents (labelled ``synthetic``) in a throwaway database: with DATABASE_URL set it
creates and drops ``<name>_bench``; without it, a temporary SQLite file. Prints a table.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid



def synthetic_document(*, cases: int, sha: str) -> dict:
    from tests.documents import make_document, make_result

    workloads = [{"name": f"synthetic_{i:03d}", "phase": "infer", "category": "synthetic"} for i in range(cases // 3 + 1)]
    results = [make_result(w["name"], regime) for w in workloads for regime in ("static", "backed", "unbacked")][:cases]
    document = make_document(run_id=str(uuid.uuid4()), git_sha=sha, results=results, synthetic=True)
    document["workloads"] = workloads
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cases", type=int, default=200, help="results per run document")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
    import django
    from django.test.utils import setup_databases, teardown_databases

    django.setup()
    from dashboard.pipeline.services import run_ingest_and_detect

    old = setup_databases(verbosity=0, interactive=False)
    try:
        per_run = []
        for i in range(args.runs):
            document = synthetic_document(cases=args.cases, sha=f"{i:040x}")
            started = time.perf_counter()
            run_ingest_and_detect(document=document)
            per_run.append(time.perf_counter() - started)
        from django.db import connection

        vendor = connection.vendor
    finally:
        teardown_databases(old, verbosity=0)
    total = sum(per_run)
    print(f"{'database':<12}{'runs':>6}{'results/run':>13}{'median ms/run':>15}{'p95 ms/run':>12}{'results/s':>11}")
    p95 = sorted(per_run)[max(0, int(len(per_run) * 0.95) - 1)]
    print(
        f"{vendor:<12}{args.runs:>6}{args.cases:>13}{statistics.median(per_run) * 1e3:>15.1f}"
        f"{p95 * 1e3:>12.1f}{args.runs * args.cases / total:>11.0f}"
    )


if __name__ == "__main__":
    main()
