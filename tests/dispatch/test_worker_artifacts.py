"""#34 / #30 item 2 through real processes: a runner worker (Celery, no Django) measures a case,
uploads its kept compile trace to the dashboard's API (a live server on loopback, a write token),
and sends only the reference through Redis; the dashboard worker ingests the result, whose
artifact is then the stored file (docs/artifacts.md)."""
from __future__ import annotations

import gzip
import hashlib

import pytest

from dashboard.api.services import api_token_create
from dashboard.results.artifacts import artifact_path
from dashboard.results.models import Artifact, Result
from tests.fixtures.workers import QUICK, wait_for
from tests.dispatch.test_workers import finished, reported_build, request

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_worker_uploads_the_trace_and_the_result_references_it(start_workers, queue_name, live_server, settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"  # the live server runs in this process
    secret = api_token_create(name="worker")[1]
    runner, dashboard = start_workers
    dashboard()
    build = reported_build(runner("gpu0", PTBENCH_DASHBOARD_URL=live_server.url, PTBENCH_API_TOKEN=secret), queue_name)
    run = request(build, queue_name, [QUICK], regimes=["static"])
    run = wait_for(lambda: finished(run.id), timeout=240, what="the run to finish")
    result = Result.objects.get(run=run)
    assert result.status == "pass"
    reference = result.artifact
    assert reference["kind"] == "torch_trace" and "path" not in reference and "upload_error" not in reference, reference
    stored = Artifact.objects.get(pk=reference["sha256"])
    data = artifact_path(stored.pk).read_bytes()
    assert hashlib.sha256(data).hexdigest() == reference["sha256"] and len(data) == reference["size_bytes"] == stored.size_bytes
    assert b"dynamo_output_graph" in gzip.decompress(data)
    assert stored.name == reference["name"] == "test_tiny_mlp-default-static-float32-cpu.torch_trace.log.gz"


def test_a_refused_upload_is_said_on_the_result_which_is_stored_all_the_same(start_workers, queue_name, live_server, settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"
    runner, dashboard = start_workers
    dashboard()
    build = reported_build(runner("gpu0", PTBENCH_DASHBOARD_URL=live_server.url, PTBENCH_API_TOKEN="ptb_wrong"), queue_name)
    run = request(build, queue_name, [QUICK], regimes=["static"])
    run = wait_for(lambda: finished(run.id), timeout=240, what="the run to finish")
    result = Result.objects.get(run=run)
    assert result.status == "pass" and "401" in result.artifact["upload_error"], result.artifact
    assert not Artifact.objects.exists()
