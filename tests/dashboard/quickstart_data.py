"""A database like the quick start's, built without torch: the real sample documents it imports
(scripts/quickstart.sh, ``manage.py ingest --imported``) and a local run of three tiny workloads on
this host's torch 2.13 build (the quick start's default request), taken from the 2.13 release
document's own results (masked_attention unbacked: its compile_error), in the quick start's own
machine class (named from a CPU model, as scripts/quickstart.sh names this host's)."""
from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

from django.core.management import call_command

LOCAL_CLASS = "cpu-amd-epyc-2c"  # what runner.engine.environment.cpu_machine_class() names a 2-core AMD EPYC host
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
IMPORTED_GLOBS = ("releases/*.json", "h100-torch2.11-*.json", "h200-torch2.11-*.json", "h200x2/*.json", "history/hist-*.json",
                 "families/r1/*.json", "families/r2/*.json", "families/spread/*.json",
                 "families/locked-static/*.json", "families/locked-dynamic/*.json", "compile-paths-gpu-2026-11-25/*.json")
LOCAL_WORKLOADS = ("mlp_loop", "positional_graph_break", "masked_attention")


def imported_files() -> list[Path]:
    return [path for pattern in IMPORTED_GLOBS for path in sorted(RESULTS.glob(pattern))]


def local_document() -> dict:
    """The quick start's own measurement: the local build (sha of torch 2.13, label ``cpu``) on this host,
    measured after every imported document (as the quick start measures it after importing them)."""
    document = copy.deepcopy(json.loads((RESULTS / "releases" / "cpu-torch2.13.0-cpu-tiny.json").read_text()))
    document["run"].update(id=str(uuid.uuid4()), started_at="2026-11-25T23:00:00+00:00", finished_at="2026-11-25T23:05:00+00:00",
                           command=f"python manage.py request_run --size tiny --machine-class {LOCAL_CLASS}", requested_by="quickstart")
    document["machine"].update(hostname="localhost", machine_class=LOCAL_CLASS)
    document["results"] = [r for r in document["results"] if r["workload"] in LOCAL_WORKLOADS]
    document["workloads"] = [w for w in document["workloads"] if w["name"] in LOCAL_WORKLOADS]
    return document


def quickstart_database(tmp_path: Path, *, detect: bool = False) -> None:
    """Store the sample data as the quick start does, then the local run. ``detect``: as the quick
    start (no broker: Celery runs eagerly), detection runs over each document once it is stored;
    otherwise it waits on the test's broker (verdicts read ``pending`` where a class has a baseline)."""
    from dashboard.celery import app  # noqa: PLC0415 (the Django app must be set up first)

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = eager or detect
    try:
        call_command("ingest", "--imported", "-v", "0", *map(str, imported_files()))
        local = tmp_path / "local-run.json"
        local.write_text(json.dumps(local_document()))
        call_command("ingest", "-v", "0", str(local))
    finally:
        app.conf.task_always_eager = eager
