"""Build probing is a worker message (issue #18), and a variant made on the dashboard is checked
against its base build's torch and runs on a worker that has only the base (issue #16): real
Redis, PostgreSQL, dashboard worker and runner worker; the worker probes the venv's torch."""
from __future__ import annotations

import pytest

from contract.variants import Overrides, variant_label
from dashboard.dispatch.models import BuildEnvironment
from dashboard.dispatch.services import build_probe_request, run_request
from dashboard.results.models import Build, Result, Run
from dashboard.results.selectors.common import build_ref
from dashboard.results.services import variant_get_or_create
from tests.fixtures.api import fields
from tests.fixtures.workers import QUICK, wait_for
from tests.dispatch.test_workers import finished, reported_build

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_variant_of_a_build_never_probed_asks_a_worker_then_is_checked_and_runs(start_workers, queue_name, writer):
    runner, dashboard = start_workers
    dashboard()
    base = reported_build(runner("gpu0"), queue_name)
    catalog = wait_for(lambda: Build.objects.get(pk=base.pk).config_catalog, timeout=60, what="the build's catalog")
    assert catalog["sections"]["inductor"]["max_fusion_size"] == {"type": "int"}  # reported at the worker's start
    assert "config_catalog" not in BuildEnvironment.objects.get(build=base).environment
    Build.objects.filter(pk=base.pk).update(config_catalog={})  # as a build never probed

    request = {"build": build_ref(base), "machine_class": queue_name, "size": "tiny", "workloads": [QUICK],
               "regimes": ["static"], "config": {"dynamo.capture_scalar_outputs": True}}
    refused = writer.post("/api/v1/runs/", request, format="json")
    assert refused.status_code == 409 and fields(refused) == ["config"], refused.json()
    assert f"asked a worker of {queue_name} to probe it" in refused.json()["detail"]
    assert Run.objects.count() == 0 and Build.objects.count() == 1  # nothing stored
    # The worker took the probe message, ran the interpreter and reported back: no web request ran it.
    wait_for(lambda: Build.objects.get(pk=base.pk).config_catalog, timeout=120, what="the worker's probe report")

    for bad, field in (({"inductor.no_such_key": 1}, "config.inductor.no_such_key"),
                       ({"inductor.max_fusion_size": "four"}, "config.inductor.max_fusion_size")):
        refused = writer.post("/api/v1/runs/", {**request, "config": bad}, format="json")
        assert refused.status_code == 400 and fields(refused) == [field], refused.json()
    assert Run.objects.count() == 0 and Build.objects.count() == 1

    # The variant runs on a worker that declares only its base: the case applies the overrides.
    overrides = Overrides.build({"dynamo.capture_scalar_outputs": True})
    variant = variant_get_or_create(base=base, overrides=overrides)
    assert variant.local_label == variant_label(base.local_label, overrides)
    run = run_request(build=variant, machine_class=queue_name, size="tiny", requested_by="test", workloads=[QUICK],
                      regimes=["static"], backend="eager")
    run = wait_for(lambda: finished(run.id), timeout=180, what="the variant's run to finish")
    assert run.status == Run.Status.COMPLETED
    result = Result.objects.get(run=run)
    assert result.status == "pass" and result.run.build_id == variant.id
    assert "--config dynamo.capture_scalar_outputs=true" in result.repro


def test_adding_an_interpreter_in_the_admin_asks_a_worker_to_probe_it(start_workers, queue_name, admin_client, tmp_path):
    """*Build environments* -> Add: the web process sends a probe message; the worker of the class
    probes the interpreter and reports it; nothing runs in the request."""
    import sys

    runner, dashboard = start_workers
    dashboard()
    worker = runner("gpu0", PTBENCH_BUILDS=f"{tmp_path}/missing/python")  # starts with no usable build
    wait_for(lambda: " ready." in worker.log_path.read_text(), timeout=120, what="the worker to start")
    assert not BuildEnvironment.objects.filter(machine_class=queue_name).exists()
    page = admin_client.post("/admin/dispatch/buildenvironment/add/", {"machine_class": queue_name, "python": sys.executable},
                             follow=True)
    text = page.content.decode()
    assert page.status_code == 200 and f"a worker of {queue_name} to probe {sys.executable}" in text, text[text.find("messagelist"):][:600]
    row = wait_for(lambda: BuildEnvironment.objects.filter(machine_class=queue_name, python=sys.executable).first(),
                   timeout=120, what="the worker's report of the interpreter")
    assert row.source == "worker" and row.build.config_catalog["sections"]["dynamo"]
    refused = admin_client.post("/admin/dispatch/buildenvironment/add/", {"machine_class": "ingest", "python": "/x"})
    assert refused.status_code == 200 and "reserved" in refused.content.decode()  # the form names it, nothing sent
    build_probe_request(machine_class=queue_name)  # the admin's "ask workers" action: the report comes again
