"""How long one large run document takes to store and to detect (issue #46 item 3).

    python -m bench.detect_large_document [--results 2000 5000 40000] [--out FILE]

Per size: a synthetic document (labelled ``synthetic``) of that many lean results (workloads x 48
configurations, a status and three figures each, as small as the probe's of issue #46), stored twice as two nightly builds (the second one's
series each have an earlier point, as a nightly has), then the second run's detection as the
dashboard worker runs it (``regressions.services.detection_run``, in-process; every chunk of it
when detection is chunked). Prints document bytes, ingest seconds of the second document and
detection seconds, the number of tasks and the longest one, against the limits the worker runs under
(CELERY_TASK_SOFT_TIME_LIMIT, PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT). A size over the most results a
document may hold is refused (as the API refuses it) and printed as such.

Starts a throwaway PostgreSQL cluster on a free loopback port (bench/dashboard_load.py's); with
DATABASE_URL set it uses that database and creates/drops ``<name>_bench`` in it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import uuid
from pathlib import Path


CONFIGS = [{"compile_mode": mode, "shape_regime": regime, "dtype": dtype, "device": "cpu"}
           for mode in ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
           for regime in ("static", "backed", "unbacked") for dtype in ("float32", "float16", "bfloat16", "float64")]


def lean_result(workload: str, config: dict, speedup: float) -> dict:
    """A result as small as the probe's (40,000 in 7.6 MB): its case, status and three figures."""
    return {"workload": workload, "config": config, "status": "pass",
            "metrics": {"speedup": speedup, "eager_latency_ms": 2.5, "compiled_latency_ms": 2.5 / speedup}}


def synthetic_document(*, results: int, day: int) -> dict:
    from tests.documents import make_document

    workloads = [{"name": f"synthetic_{i:05d}", "phase": "infer", "category": "synthetic"} for i in range(results // len(CONFIGS) + 1)]
    cases = [lean_result(w["name"], c, 1.25 + 0.001 * day) for w in workloads for c in CONFIGS][:results]
    document = make_document(run_id=str(uuid.uuid4()), git_sha=f"{day:04x}" + "b" * 36, results=cases, synthetic=True,
                             notes="synthetic: bench/detect_large_document.py")
    document["build"].update(label=f"synthetic nightly {day}", commit_time=f"2026-11-{day:02d}T00:00:00+00:00")
    document["workloads"] = workloads
    return document


def measure(size: int, day: int) -> dict:
    from django.conf import settings

    from contract.document import InvalidDocument
    from dashboard.pipeline.services import run_ingest_and_detect
    try:  # as the worker's task runs it: steps of DETECTION_TASK_BUDGET_S, each sending the next on
        from dashboard.regressions.services.detection_pass import detection_step

        def detection_run_all(*, run_id) -> list[float]:
            steps, pass_started = [], None
            while True:
                started = time.perf_counter()
                outcome = detection_step(run_id=run_id, budget_s=settings.DETECTION_TASK_BUDGET_S, pass_started=pass_started)
                steps.append(time.perf_counter() - started)
                if outcome.done or outcome.skipped:
                    return steps
                pass_started = outcome.pass_started
    except ImportError:  # before detection was chunked (issue #46): one pass, one task
        from dashboard.regressions.services.detection_pass import detection_run

        def detection_run_all(*, run_id) -> list[float]:
            started = time.perf_counter()
            detection_run(run_id=run_id)
            return [time.perf_counter() - started]

    row = {"results": size}
    documents = [synthetic_document(results=size, day=day), synthetic_document(results=size, day=day + 1)]
    body = json.dumps(documents[1]).encode()
    row["mb"] = len(body) / 2**20
    try:
        run_ingest_and_detect(document=json.dumps(documents[0]).encode(), detect=False)
        started = time.perf_counter()
        run_ingest_and_detect(document=body, detect=False)
        row["ingest_s"] = time.perf_counter() - started
    except InvalidDocument as exc:
        row["refused"] = exc.errors[0].field
        return row
    started = time.perf_counter()
    chunks = detection_run_all(run_id=documents[1]["run"]["id"])
    row["detect_s"] = time.perf_counter() - started
    row["chunks"] = chunks
    row["limit_s"] = settings.CELERY_TASK_SOFT_TIME_LIMIT
    return row


def _max_results():
    try:
        from contract.document import MAX_RESULTS
    except ImportError:  # before issue #46: the schema's maxItems
        from contract.document import load_schema

        return load_schema()["properties"]["results"]["maxItems"]
    return MAX_RESULTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, nargs="+", default=[2000, 5000, 40000])
    parser.add_argument("--out", help="also write the table here")
    args = parser.parse_args()

    cluster = None
    if "DATABASE_URL" not in os.environ:
        from bench.dashboard_load import Cluster

        cluster = Cluster()
        os.environ["DATABASE_URL"] = cluster.start()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "ERROR")
    import django
    from django.test.utils import setup_databases, teardown_databases

    django.setup()
    from django.conf import settings
    from django.db import connection

    old = setup_databases(verbosity=0, interactive=False)
    rows = []
    try:
        for index, size in enumerate(args.results):
            rows.append(measure(size, day=1 + 2 * index))
            print(rows[-1], flush=True)
        vendor = connection.vendor
    finally:
        teardown_databases(old, verbosity=0)
        if cluster:
            cluster.stop()
    lines = [f"# {platform.node()} · {os.cpu_count()} cores · {vendor} · soft limit {settings.CELERY_TASK_SOFT_TIME_LIMIT} s · "
             f"dashboard visibility timeout {settings.PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT} s · "
             f"results per document at most {_max_results()}",
             f"{'results':>8}{'MiB':>7}{'ingest s':>10}{'detect s':>10}{'chunks':>8}{'longest task s':>16}"]
    for row in rows:
        if "refused" in row:
            lines.append(f"{row['results']:>8}{row['mb']:>7.1f}   refused naming {row['refused']}")
            continue
        chunks = row["chunks"]
        longest = max(chunks) if chunks else row["detect_s"]
        lines.append(f"{row['results']:>8}{row['mb']:>7.1f}{row['ingest_s']:>10.1f}{row['detect_s']:>10.1f}{len(chunks):>8}{longest:>16.1f}")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()
