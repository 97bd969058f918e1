"""A database like the quick start's, built without torch: the real sample documents it imports
(scripts/quickstart.sh, ``manage.py ingest --imported``) and a local run of three tiny workloads on
this host's torch 2.13 build (the quick start's default request), taken from the 2.13 release
document's own results (masked_attention unbacked: a data_dependent_error, as today's runner calls it), in the quick start's own
machine class (named from a CPU model, as scripts/quickstart.sh names this host's)."""
from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

from django.core.management import call_command

from contract.data_dependent import reclassify

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
    for result in document["results"]:  # the status today's runner gives (the document predates it)
        reclassify(result)
    document["workloads"] = [w for w in document["workloads"] if w["name"] in LOCAL_WORKLOADS]
    return document


def quickstart_database(tmp_path: Path, *, detect: bool = False) -> None:
    """Store the sample data as the quick start does, then the local run. ``detect``: as the quick
    start (no broker: Celery runs eagerly), detection runs over each document once it is stored;
    otherwise it waits on the test's broker (verdicts read ``pending`` where a class has a baseline).
    With ``detect`` the first build is kept (``_Snapshot``) and later tests get its rows back."""
    from dashboard.celery import app  # noqa: PLC0415 (the Django app must be set up first)

    snapshot = _Snapshot()
    before = snapshot.counts() if detect else {}
    if detect and snapshot.restore(before):
        return
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = eager or detect
    try:
        call_command("ingest", "--imported", "-v", "0", *map(str, imported_files()))
        local = tmp_path / "local-run.json"
        local.write_text(json.dumps(local_document()))
        call_command("ingest", "-v", "0", str(local))
    finally:
        app.conf.task_always_eager = eager
    if detect:
        snapshot.save(before)


class _Snapshot:
    """The rows one ``quickstart_database(detect=True)`` stored, kept in a schema of the test
    database that the transactional tests' flush never empties (it truncates the tables on the
    search path), and put back in one transaction (its foreign keys are checked at the commit) when
    a later test asks for the same data with each of those tables empty again: about a second
    instead of the 5 to 11 s that importing the documents with detection takes (ten tests do)."""

    SCHEMA = "ptbench_quickstart_snapshot"

    def __init__(self):
        from django.db import connection  # noqa: PLC0415

        self.connection = connection

    def counts(self) -> dict[str, int]:
        tables = self.connection.introspection.django_table_names(only_existing=True, include_views=False)
        with self.connection.cursor() as cursor:
            counts = {}
            for table in sorted(tables):
                cursor.execute(f'SELECT COUNT(*) FROM "{table}"')
                counts[table] = cursor.fetchone()[0]
            return counts

    def save(self, before: dict[str, int]) -> None:
        """Keep what the build stored, when all of it went into tables that were empty before."""
        after = self.counts()
        grown = sorted(table for table, count in after.items() if count != before.get(table, 0))
        with self.connection.cursor() as cursor:
            cursor.execute(f'DROP SCHEMA IF EXISTS "{self.SCHEMA}" CASCADE')
            if any(before.get(table, 0) for table in grown):
                return  # it changed rows that were there: build it each time
            cursor.execute(f'CREATE SCHEMA "{self.SCHEMA}"')
            for table in grown:
                cursor.execute(f'CREATE TABLE "{self.SCHEMA}"."{table}" AS TABLE "{table}"')

    def restore(self, before: dict[str, int]) -> bool:
        from django.db import transaction  # noqa: PLC0415

        with self.connection.cursor() as cursor:
            cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", [self.SCHEMA])
            kept = sorted(row[0] for row in cursor.fetchall())
        if not kept or any(before.get(table, 1) for table in kept):
            return False
        with transaction.atomic(), self.connection.cursor() as cursor:
            for table in kept:
                cursor.execute(f'INSERT INTO "{table}" SELECT * FROM "{self.SCHEMA}"."{table}"')
                # Its sequences past the ids put back, unless they are past them already.
                cursor.execute("SELECT pg_get_serial_sequence(%s, column_name), column_name FROM information_schema.columns "
                               "WHERE table_schema = current_schema() AND table_name = %s", [f'"{table}"', table])
                for sequence, column in [row for row in cursor.fetchall() if row[0]]:
                    cursor.execute(f'SELECT setval(%s, GREATEST((SELECT MAX("{column}") FROM "{table}"), '
                                   f"(SELECT last_value FROM {sequence})))", [sequence])
        return True
