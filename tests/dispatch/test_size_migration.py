"""#34 item 3: the size was called ``suite``; stored data says ``size`` after results/0019,
dispatch/0006 and alerts/0004, and says ``suite`` again when they are undone (real PostgreSQL)."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django_celery_beat.models import PeriodicTask

from dashboard.alerts.models import Subscription
from dashboard.alerts.services import subscription_create
from dashboard.dispatch import services
from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Result, Run
from dashboard.results.services import build_get_or_create, run_ingest
from tests.fixtures.workers import QUICK
from tests.documents import make_document

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("results", "0018_result_explain"), ("dispatch", "0005_casetask_one_identity"),
          ("alerts", "0003_subscription_metrics_compile_phases")]


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _rows(sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def test_stored_sizes_commands_schedules_and_subscriptions_are_respelled_both_ways():
    document = make_document()
    run_ingest(document=document)
    requested = services.run_request(build=build_get_or_create(document["build"]), machine_class="cpu", size="tiny",
                                     requested_by="test", workloads=[QUICK], dispatch=True)
    call_command("schedule_run", "--machine-class", "gpu-h100", "--size", "full", "--hour", "3")
    subscription_create(name="full only", channel="email", target="oncall@bench.test", sizes=["full"])
    assert "--size tiny" in requested.command and all("--size tiny" in c.repro for c in CaseTask.objects.all())
    leaf = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate(BEFORE)
        assert _rows("SELECT suite FROM results_run ORDER BY suite") == [("tiny",), ("tiny",)]
        assert all("--suite tiny" in r and "--size" not in r for (r,) in _rows("SELECT repro FROM results_result"))
        assert {c for (c,) in _rows("SELECT command FROM results_run")} == {"python -m runner run --suite tiny",
                                                                             requested.command.replace("--size", "--suite")}
        assert all("--suite tiny" in r for (r,) in _rows("SELECT repro FROM dispatch_casetask"))
        [(kwargs,)] = _rows("SELECT kwargs FROM django_celery_beat_periodictask WHERE task = 'dispatch.scheduled_run'")
        assert json.loads(kwargs) == {"build": "latest", "machine_class": "gpu-h100", "suite": "full"}
        assert [json.loads(s) for (s,) in _rows("SELECT suites FROM alerts_subscription")] == [["full"]]
    finally:
        _migrate(leaf)
    assert sorted(Run.objects.values_list("size", flat=True)) == ["tiny", "tiny"]
    assert Result.objects.count() == len(document["results"]) and not Result.objects.exclude(repro__contains="--size tiny").exists()
    assert Run.objects.get(pk=requested.id).command == requested.command
    assert not CaseTask.objects.exclude(repro__contains="--size tiny").exists()
    task = PeriodicTask.objects.get(task="dispatch.scheduled_run")
    assert json.loads(task.kwargs) == {"build": "latest", "machine_class": "gpu-h100", "size": "full"}
    assert Subscription.objects.get().sizes == ["full"]


def test_an_older_documents_repro_is_stored_as_todays_runner_takes_it():
    # the imported sample documents (bench/results, before #34) say --suite tiny; the runner refuses it now
    document = make_document()
    old = "python -m runner run --suite tiny --workloads mlp_loop --modes default --regimes static --dtypes float32 --device cpu"
    for item in document["results"]:
        item["repro"] = old
    run_ingest(document=document)
    assert {r for (r,) in _rows("SELECT repro FROM results_result")} == {old.replace("--suite tiny", "--size tiny")}
    # and results stored before ingest respelled it: results/0023 rewrites them
    Result.objects.update(repro=old)
    from importlib import import_module

    from django.apps import apps

    import_module("dashboard.results.migrations.0023_result_repro_size").forwards(apps, None)
    assert {r for (r,) in _rows("SELECT repro FROM results_result")} == {old.replace("--suite tiny", "--size tiny")}
