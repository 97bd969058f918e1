"""Nightly intake through real processes (issue #41, docs/builds.md): the dashboard asks a runner
worker of the class to take in the newest build from the worker's own index (/opt/wheels' real
torch wheel, real uv); the worker makes the environment, probes it with the runner's environment
command (the one torch import of the intake tests), reports it, and the class's nightly run is
requested on it and measured there (the worker has no other build). The same version again is the
same build and the same nightly run. ``/`` and the API show it."""
from __future__ import annotations

import os
import tempfile

import pytest
import torch

from dashboard.dispatch.models import BuildEnvironment, Intake
from dashboard.pipeline.intake import intake_request
from dashboard.results.models import Build, Result, Run
from tests.fixtures.workers import QUICK, wait_for
from tests.dispatch.test_workers import finished

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(not os.path.isdir("/opt/wheels"), reason="needs /opt/wheels' torch wheel")]
# uv's cache outlives the test (a cache: a wheel met before is hard-linked, not unpacked again)
UV_CACHE = os.path.join(tempfile.gettempdir(), "ptbench-tests-uv-cache")


def answered(intake_id: int) -> Intake | None:
    intake = Intake.objects.select_related("build", "run").get(pk=intake_id)
    return intake if intake.state != Intake.State.SENT else None


def test_a_worker_takes_in_the_newest_build_and_its_nightly_runs_on_it_once(start_workers, queue_name, tmp_path, client):
    runner, dashboard = start_workers
    dashboard()
    worker = runner("w0", PTBENCH_BUILDS=f"{tmp_path}/missing/python",  # no build but what it takes in
                    PTBENCH_INTAKE_INDEX="/opt/wheels", PTBENCH_INTAKE_TAKE="release", PTBENCH_INTAKE_INHERIT="1",
                    PTBENCH_INTAKE_DIR=str(tmp_path / "intake"), PTBENCH_INTAKE_CACHE=UV_CACHE, PTBENCH_INTAKE_KEEP="2")
    wait_for(lambda: " ready." in worker.log_path.read_text(), timeout=120, what="the worker to start")
    options = {"size": "tiny", "workloads": [QUICK], "regimes": ["static"], "backend": "eager"}

    first_id = intake_request(machine_class=queue_name, run_options=options).id
    first = wait_for(lambda: answered(first_id), timeout=300, what="the intake's answer")
    assert first.state == Intake.State.TAKEN, (first.error, first.log)
    assert first.version == "2.13.0+cpu" and first.cached is False and first.hostname
    build = first.build
    assert (build.torch_version, build.git_sha, build.local_label) == (torch.__version__, torch.version.git_version, "cpu")
    assert first.python.startswith(str(tmp_path / "intake" / "envs" / "torch-2.13.0-cpu"))
    row = BuildEnvironment.objects.get(machine_class=queue_name, python=first.python)
    assert row.build_id == build.id and row.source == "worker"
    assert row.environment["build"]["environment"]["intake"]["version"] == "2.13.0+cpu"

    run = first.run
    assert (run.reason, run.requested_by, run.build_id, run.size) == ("nightly", "intake", build.id, "tiny")
    run = wait_for(lambda: finished(run.id), timeout=240, what="the nightly run on the build taken in")
    assert run.status == Run.Status.COMPLETED and Result.objects.get(run=run).status == "pass"
    assert run.build_facts["environment"]["python_executable"] == first.python  # measured in the new environment

    # The same version again: found made, the same build, no second nightly.
    second_id = intake_request(machine_class=queue_name, run_options=options).id
    second = wait_for(lambda: answered(second_id), timeout=120, what="the second intake's answer")
    assert second.state == Intake.State.TAKEN and second.cached is True and second.build_id == build.id
    assert second.run_id == run.id and Run.objects.filter(build=build).count() == 1
    assert Build.objects.filter(git_sha=build.git_sha, local_label="cpu").count() == 1

    page = client.get("/").content.decode()
    section = page[page.index('id="intake"'):][:3000]
    assert queue_name in section and "torch 2.13.0+cpu" in section and "found made" in section, section
    api = client.get("/api/v1/intake/").json()["classes"]
    mine = next(c for c in api if c["machine_class"] == queue_name)
    assert mine["taken"]["version"] == "2.13.0+cpu" and mine["taken"]["build"]["git_sha"] == build.git_sha
    assert mine["taken"]["run_id"] == str(run.id) and mine["failure"] is None
