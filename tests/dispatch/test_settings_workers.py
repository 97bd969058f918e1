"""Issue #33 item 1 with real processes (Redis, PostgreSQL, the dashboard worker, runner workers):
a runner worker re-checks every case message. A variant stored without the API's check (an older
dashboard, a row written by hand) reaches the worker through the broker carrying
``TRITON_PTXAS_PATH``: the worker refuses it, records why on the case and runs nothing; a worker
whose operator admits that one value (PTBENCH_ALLOW_SETTINGS) measures it."""
from __future__ import annotations

import pytest

from contract.settings_policy import RECORDED
from contract.variants import Overrides
from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Result, Run
from dashboard.results.services import variant_get_or_create
from tests.fixtures.workers import QUICK, wait_for
from tests.dispatch.test_workers import finished, reported_build, request

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
PTXAS = {"TRITON_PTXAS_PATH": "/bin/true"}  # a CPU case never calls ptxas: harmless if it ever ran


def test_a_worker_refuses_a_message_carrying_a_program_and_its_operator_can_admit_it(start_workers, queue_name):
    runner, dashboard = start_workers
    dashboard()
    plain = runner("plain")
    base = reported_build(plain, queue_name)
    variant = variant_get_or_create(base=base, overrides=Overrides.build(None, PTXAS, allow=RECORDED))

    run = request(variant, queue_name, [QUICK], regimes=["static"])
    assert CaseTask.objects.get(run=run).spec["env_overrides"] == PTXAS  # what the message carries
    run = wait_for(lambda: finished(run.id), timeout=180, what="the refused case to be recorded")
    case = CaseTask.objects.get(run=run)
    assert run.status == Run.Status.FAILED and case.state == CaseTask.State.FAILED
    assert case.attempts == 0 and case.worker.startswith("plain@")  # refused before it started, by that worker
    assert "settings refused, nothing was run: spec.env.TRITON_PTXAS_PATH: refused: 'ptxas' in its name" in case.error
    assert "PTBENCH_ALLOW_SETTINGS" in case.error and not Result.objects.filter(run=run).exists()

    plain.stop()
    admitting = runner("admitting", PTBENCH_ALLOW_SETTINGS="TRITON_PTXAS_PATH=/bin/true")
    run = request(variant, queue_name, [QUICK], regimes=["static"])
    run = wait_for(lambda: finished(run.id), timeout=180, what="the admitted case to finish")
    assert run.status == Run.Status.COMPLETED, CaseTask.objects.get(run=run).error
    result = Result.objects.get(run=run)
    assert result.status == "pass" and result.run.build == variant and variant.overrides["env"] == PTXAS
    assert result.environment["worker"]["worker"].startswith("admitting@")
    assert "settings refused" not in admitting.log_path.read_text()
