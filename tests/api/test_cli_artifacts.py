"""#34 / #30 item 2: ``python -m runner run`` without ``--out`` hands each case's kept trace on with
its run: uploaded before the document with ``--url`` (a live server on loopback, a write token), or
stored with it by ``manage.py ingest``; and a dashboard running cases in-process (no broker, the
quick start) stores the file directly. Eager backend, the tiniest CPU case (docs/artifacts.md)."""
from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.results.artifacts import artifact_path
from dashboard.results.models import Artifact, Result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

REPO_ROOT = Path(__file__).resolve().parents[2]
CASE = ["--workloads", "tests.runner.sample_workloads:TinyMLP", "--regimes", "static", "--backend", "eager", "--no-warm"]


def run_cli(extra: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner", "run", *CASE, *extra], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def assert_stored_with_its_file() -> Result:
    result = Result.objects.get()
    reference = result.artifact
    assert "path" not in reference and "upload_error" not in reference, reference
    data = artifact_path(reference["sha256"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == reference["sha256"] == Artifact.objects.get().pk
    assert b"dynamo_output_graph" in gzip.decompress(data)
    return result


def test_with_url_the_trace_is_uploaded_before_the_document(live_server, settings, tmp_path, subprocess_env):
    from dashboard.api.services import api_token_create
    from dashboard.celery import app

    settings.ARTIFACT_ROOT = tmp_path / "store"  # the live server runs in this process
    app.conf.task_always_eager = True  # detection in-process after the commit, as without a broker
    try:
        done = run_cli(["--url", live_server.url, "--token", api_token_create(name="ci")[1]], subprocess_env)
    finally:
        app.conf.task_always_eager = False
    assert done.returncode == 0, done.stderr[-3000:]
    assert_stored_with_its_file()


def test_without_out_or_url_manage_py_ingest_stores_the_trace_with_the_run(tmp_path, subprocess_env):
    env = {**subprocess_env, "ARTIFACT_ROOT": str(tmp_path / "store")}
    done = run_cli([], env)
    assert done.returncode == 0, done.stderr[-3000:]
    from django.test import override_settings

    with override_settings(ARTIFACT_ROOT=tmp_path / "store"):
        assert_stored_with_its_file()


def test_a_dashboard_without_a_broker_stores_the_trace_of_a_case_it_runs_in_process(settings, tmp_path):
    from dashboard.dispatch.services import build_probe_request, run_request
    from dashboard.results.models import Build, Run

    settings.ARTIFACT_ROOT = tmp_path / "store"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    build_probe_request(machine_class="cpu")  # probes this interpreter after the (auto)commit
    build = Build.objects.get()
    run = run_request(build=build, machine_class="cpu", size="tiny", requested_by="test",
                      workloads=["tests.runner.sample_workloads:TinyMLP"], regimes=["static"], backend="eager")
    assert Run.objects.get(pk=run.pk).status == Run.Status.COMPLETED
    assert_stored_with_its_file()
