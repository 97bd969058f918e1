"""Detection, alerts and requested runs survive the broker: Redis down at commit time, Redis
restarted mid-burst (AOF), a dashboard worker killed holding a task. Real Redis, PostgreSQL and
worker processes (scripts/test.sh)."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from dashboard.dispatch.models import CaseTask
from dashboard.regressions.models import AlertSummary
from dashboard.regressions.selectors import build_verdict, run_detection_pending
from dashboard.pipeline.services import detection_sweep
from dashboard.results.models import Build, Run
from dashboard.pipeline.tasks import ingest_run_document
from runner.worker.config import ConfigError, WorkerConfig
from tests.fixtures.workers import QUICK, ROOT, wait_for
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SHA_OLD, SHA_NEW = "a" * 40, "b" * 40


def submit(client, document):
    return client.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")


def test_an_ingest_while_redis_is_down_is_stored_pending_and_the_sweep_detects_it(writer, redis_server, dashboard_worker):  # noqa: F811
    old = make_document(git_sha=SHA_OLD, started_at="2026-11-20T05:00:00+00:00")
    old["build"]["commit_time"] = "2026-11-20T00:00:00+00:00"
    new = make_document(git_sha=SHA_NEW)
    new["build"]["commit_time"] = "2026-11-21T00:00:00+00:00"
    redis_server.stop()
    answers = [submit(writer, old), submit(writer, new)]
    assert [a.status_code for a in answers] == [201, 201], [a.content[:300] for a in answers]
    assert Run.objects.count() == 2 and not AlertSummary.objects.exists()
    build = Build.objects.get(git_sha=SHA_NEW)
    assert run_detection_pending(build=build, machine_class="cpu")
    verdict = build_verdict(build=build, machine_class="cpu")
    assert (verdict.verdict, verdict.reason) == ("pending", "detection_pending")

    redis_server.start()
    assert detection_sweep(now=timezone.now())["detections"] == 0  # within the grace: their messages may be on the way
    counts = detection_sweep(now=timezone.now() + dt.timedelta(minutes=5))
    assert counts["detections"] == 2
    dashboard_worker()
    wait_for(lambda: AlertSummary.objects.count() == 2, timeout=120, what="the sweep's detections")
    assert not run_detection_pending(build=build, machine_class="cpu")
    assert build_verdict(build=build, machine_class="cpu").verdict == "pass"
    wait_for(lambda: not AlertSummary.objects.filter(notified_at__isnull=True).exists(), timeout=60, what="the alerts' plans")
    assert detection_sweep(now=timezone.now() + dt.timedelta(minutes=5)) == {"detections": 0, "bisections": 0, "plans": 0, "deliveries": 0}


def test_requesting_a_run_while_redis_is_down_stores_it_once_and_the_sweep_sends_its_cases(writer, redis_server):  # noqa: F811
    ref = writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA_NEW}, format="json").json()["ref"]
    body = {"build": ref, "machine_class": "cpu", "size": "tiny", "workloads": [QUICK], "modes": ["default"], "regimes": ["static"]}
    redis_server.stop()
    answer = writer.post("/api/v1/runs/", body, format="json", HTTP_IDEMPOTENCY_KEY="ci-job-7/attempt")
    assert answer.status_code == 201, answer.content[:300]
    # The client's retry (its answer lost) with the same key: the same run, not a second one.
    again = writer.post("/api/v1/runs/", body, format="json", HTTP_IDEMPOTENCY_KEY="ci-job-7/attempt")
    assert again.status_code == 200 and again.json()["id"] == answer.json()["id"]
    bad = writer.post("/api/v1/runs/", body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 101)
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "Idempotency-Key"
    run = Run.objects.get()
    assert CaseTask.objects.filter(run=run, sends=0).count() == run.cases_expected >= 1
    redis_server.start()
    from dashboard.dispatch.services import cases_requeue_stale

    assert cases_requeue_stale(now=timezone.now() + dt.timedelta(minutes=6))["sent"] == run.cases_expected
    assert not CaseTask.objects.filter(run=run, sends=0).exists() and Run.objects.count() == 1


def test_redis_restarted_mid_burst_loses_no_ingest(redis_server, dashboard_worker):
    assert redis_server.appendonly, "the test command's Redis must keep an append-only file"
    documents = [make_document() for _ in range(20)]
    for document in documents[:10]:
        ingest_run_document.delay(document)
    redis_server.stop()
    redis_server.start()
    for document in documents[10:]:
        ingest_run_document.delay(document)
    dashboard_worker()
    ids = {d["run"]["id"] for d in documents}
    wait_for(lambda: Run.objects.filter(id__in=ids).count() == 20, timeout=180, what="all 20 ingests")


STEAL = """
import os, signal, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
django.setup()
from dashboard.celery import app
with app.connection_for_read() as connection:
    channel = connection.default_channel
    message = channel.basic_get("ingest", no_ack=False)  # held unacknowledged, as a worker mid-task
    assert message is not None
    print("took", message.delivery_tag, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_dashboard_workers_ingest_is_taken_up_again_within_the_dashboards_timeout(subprocess_env, dashboard_worker):
    # Longer than a dashboard task may run (issue #46: a copy of a running task was handed out again).
    assert django_settings.PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT == django_settings.CELERY_TASK_TIME_LIMIT + 60 == 420
    # The runner workers' cases: a killed worker's go to another 600 s after its last renewal (every
    # 10 s); 7,200 s only for a worker that does not renew (an older release): tests/faults/test_lost_worker_case.py.
    assert django_settings.PTBENCH_VISIBILITY_TIMEOUT == 7200
    runner = WorkerConfig.from_env({"PTBENCH_MACHINE_CLASS": "cpu"})
    assert (runner.visibility_timeout_s, runner.handover_s, runner.restore_interval_s) == (7200, 600, 10.0)
    with pytest.raises(ConfigError, match="PTBENCH_HANDOVER_S"):  # one late renewal would hand a live case out
        WorkerConfig.from_env({"PTBENCH_HANDOVER_S": "20"})
    options = django_settings.CELERY_BROKER_TRANSPORT_OPTIONS
    assert options["visibility_timeout"] == 420 and options["unacked_key"] != "unacked"  # the GPU workers' keys
    document = make_document()
    ingest_run_document.delay(document)
    env = {**subprocess_env, "PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT": "5"}
    stolen = subprocess.run([sys.executable, "-c", STEAL], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert stolen.returncode == -9 and "took" in stolen.stdout, stolen.stderr[-2000:]
    dashboard_worker(PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT="5", PTBENCH_RESTORE_INTERVAL_S="1")
    wait_for(lambda: Run.objects.filter(id=document["run"]["id"]).exists(), timeout=90, what="the lost ingest")


def test_beat_installs_the_detection_and_noise_bands_sweeps():
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    from dashboard.celery import app

    DatabaseScheduler(app=app)
    task = PeriodicTask.objects.get(task="regressions.sweep")
    assert (task.interval.every, task.interval.period, task.queue) == (120, "seconds", "analysis") and task.enabled
    bands = PeriodicTask.objects.get(task="regressions.noise_bands_sweep")  # every build's noise bands (#46 item 13)
    assert (bands.interval.every, bands.interval.period, bands.queue) == (300, "seconds", "analysis") and bands.enabled
