"""The Celery path: a real worker process, a real Redis broker, the same ingest service."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from dashboard.results.models import Result, Run
from dashboard.pipeline.tasks import ingest_run_document
from tests.documents import make_document

ROOT = __file__.rsplit("/tests/", 1)[0]
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def ingest_worker(subprocess_env, tmp_path):
    log = open(tmp_path / "worker.log", "w+")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "dashboard", "worker", "-Q", "ingest,analysis", "-P", "solo",
         "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "info"],
        cwd=ROOT, env=subprocess_env, stdout=log, stderr=subprocess.STDOUT,
    )
    yield worker
    worker.terminate()
    worker.wait(timeout=30)
    log.seek(0)
    print(log.read()[-3000:])


def test_worker_ingests_a_document_once_and_answers_bad_ones(ingest_worker):
    document = make_document()

    first = ingest_run_document.apply_async(args=[document]).get(timeout=90)
    second = ingest_run_document.apply_async(args=[document]).get(timeout=30)
    document_bad = make_document()
    document_bad["build"]["git_sha"] = "not-a-sha"
    bad = ingest_run_document.apply_async(args=[document_bad]).get(timeout=30)

    assert first == {"ok": True, "run_id": document["run"]["id"], "created": True, "results_created": 6, "results_skipped": 0}
    assert second["ok"] and second["results_created"] == 0 and second["results_skipped"] == 6
    assert bad["ok"] is False and bad["errors"][0]["field"] == "build.git_sha"
    assert Run.objects.count() == 1 and Result.objects.count() == 6


def test_the_worker_runs_detection_after_an_ingest(ingest_worker):
    """Ingest enqueues regression detection on the 'analysis' queue once its transaction commits."""
    from dashboard.regressions.models import AlertSummary, Regression

    baseline = make_document(git_sha="a" * 40)  # a series' first build is its baseline: failures there are not regressions
    baseline["build"]["commit_time"] = "2026-11-01T00:00:00+00:00"
    ingest_run_document.apply_async(args=[baseline]).get(timeout=90)
    document = make_document()
    document["build"]["commit_time"] = "2026-11-02T00:00:00+00:00"
    failing = document["results"][0]
    failing.update(status="compile_error", error={"type": "InductorError", "message": "boom"})
    ingest_run_document.apply_async(args=[document]).get(timeout=90)
    deadline = time.monotonic() + 60
    while not AlertSummary.objects.filter(run_id=document["run"]["id"]).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert AlertSummary.objects.filter(run_id=document["run"]["id"]).exists()
    assert Regression.objects.get(finding="started_failing").details["reasons"] == ["InductorError: boom"]
