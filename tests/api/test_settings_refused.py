"""Issue #33 item 1 on PostgreSQL: a variant's settings that are not data (a path, a program, a
compiler, a remote cache) are refused naming the key through every entry point of the dashboard,
and nothing is stored or queued; settings that are data still make variants."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from contract.document import InvalidDocument
from contract.settings_policy import RECORDED
from contract.variants import Overrides, variant_label
from dashboard.dispatch.models import CaseTask
from dashboard.results.models import Build, Result, Run
from dashboard.results.services import run_ingest
from tests.fixtures.api import fields
from tests.documents import make_document

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"
CATALOG = {"torch_version": "2.13.0", "sections": {
    "inductor": {"coordinate_descent_tuning": {"type": "bool"}, "cpp.cxx": {"type": "tuple"},
                 "cuda.cuda_cxx": {"type": "str", "nullable": True}, "trace.debug_dir": {"type": "str", "nullable": True},
                 "fx_graph_remote_cache": {"type": "bool", "nullable": True}, "cpp.march": {"type": "str", "nullable": True},
                 "post_grad_custom_post_pass": {"type": "callable", "nullable": True}},
    "dynamo": {}, "functorch": {}}}
# The examples and their kin: (body part, the field the answer must name).
REFUSED = [
    ({"env": {"TRITON_PTXAS_PATH": "/tmp/evil.sh"}}, "env.TRITON_PTXAS_PATH"),
    ({"env": {"TRITON_HOME": "/tmp"}}, "env.TRITON_HOME"),
    ({"env": {"TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1"}}, "env.TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE"),
    ({"env": {"TRITON_CACHE_MANAGER": "evil_module:Manager"}}, "env.TRITON_CACHE_MANAGER"),
    ({"env": {"TORCH_LOGS": "$(sh /tmp/evil.sh)"}}, "env.TORCH_LOGS"),
    ({"config": {"inductor.cpp.cxx": "/tmp/evil.sh"}}, "config.inductor.cpp.cxx"),
    ({"config": {"inductor.cuda.cuda_cxx": "gcc"}}, "config.inductor.cuda.cuda_cxx"),
    ({"config": {"inductor.trace.debug_dir": "/etc"}}, "config.inductor.trace.debug_dir"),
    ({"config": {"inductor.fx_graph_remote_cache": True}}, "config.inductor.fx_graph_remote_cache"),
    ({"config": {"inductor.post_grad_custom_post_pass": "os.system"}}, "config.inductor.post_grad_custom_post_pass"),
    ({"config": {"inductor.cpp.march": "native -fplugin=/tmp/evil.so"}}, "config.inductor.cpp.march"),
]


@pytest.fixture
def base(writer) -> Build:
    """A probed base build (its torch's config keys known): only the settings policy can refuse."""
    assert writer.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": SHA}, format="json").status_code == 201
    build = Build.objects.get()
    build.config_catalog = CATALOG
    build.save(update_fields=["config_catalog"])
    return build


def stored() -> tuple[int, int, int, int]:
    return Build.objects.count(), Run.objects.count(), CaseTask.objects.count(), Result.objects.count()


@pytest.mark.parametrize("bad, field", REFUSED)
def test_api_builds_and_runs_refuse_a_setting_that_is_not_data_naming_it(writer, base, bad, field):
    before = stored()
    refused = writer.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": SHA, **bad}, format="json")
    assert refused.status_code == 400 and fields(refused) == [field], refused.json()
    assert "refused" in refused.json()["detail"]
    request = {"build": SHA[:12], "machine_class": "cpu", "size": "tiny", "workloads": ["mlp"], **bad}
    refused = writer.post("/api/v1/runs/", request, format="json")
    assert refused.status_code == 400 and fields(refused) == [field], refused.json()
    assert stored() == before


@pytest.mark.parametrize("bad, field", REFUSED[:6])
def test_api_submit_refuses_a_document_whose_variant_carries_such_a_setting(writer, bad, field):
    document = make_document()
    overrides = {"config": {}, "env": {}, **bad}
    document["build"]["overrides"] = overrides
    document["build"]["local_label"] = variant_label("", Overrides.recorded(overrides))
    refused = writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
    assert refused.status_code == 400 and fields(refused) == [f"build.overrides.{field}"], refused.json()
    assert stored() == (0, 0, 0, 0)


def test_settings_that_are_data_still_make_variants(writer, base):
    body = {"torch_version": "2.13.0", "git_sha": SHA, "config": {"inductor.coordinate_descent_tuning": True},
            "env": {"TORCHINDUCTOR_FREEZING": "1", "TORCH_LOGS": "+dynamo,recompiles"}}
    made = writer.post("/api/v1/builds/", body, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["overrides"]["env"] == {"TORCH_LOGS": "+dynamo,recompiles", "TORCHINDUCTOR_FREEZING": "1"}
    request = {"build": SHA[:12], "machine_class": "cpu", "size": "tiny", "cases_expected": 1,
               "env": {"TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": "ATEN,TRITON"}}
    assert writer.post("/api/v1/runs/", request, format="json").status_code == 201


def test_a_workers_document_records_what_it_ran_but_a_client_cannot_post_it():
    """Through the broker (``run_ingest`` of a case's document) a worker's variant admitted by its
    operator is stored as run; the same document posted by a client is refused above."""
    document = make_document()
    overrides = Overrides.build(None, {"TRITON_PTXAS_PATH": "/opt/cuda/bin/ptxas"}, allow=RECORDED)
    document["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    run_ingest(document=document)
    assert Build.objects.get().overrides == {"config": {}, "env": {"TRITON_PTXAS_PATH": "/opt/cuda/bin/ptxas"}}
    document["build"]["overrides"] = {"env": {"TORCHINDUCTOR_CACHE_DIR": "/tmp/x"}}  # the form is still checked
    with pytest.raises(InvalidDocument):
        run_ingest(document=make_document() | {"build": document["build"]})


def test_admin_variant_form_names_the_refused_setting_and_stores_nothing(admin_client, base):
    form = {"action": "create_variant", "_selected_action": [base.pk], "apply": "1"}
    page = admin_client.post("/admin/results/build/", {**form, "env": "TRITON_PTXAS_PATH=/tmp/evil.sh"}).content.decode()
    assert "env.TRITON_PTXAS_PATH: refused: &#x27;ptxas&#x27; in its name" in page
    page = admin_client.post("/admin/results/build/", {**form, "config": "inductor.cpp.cxx=/tmp/evil.sh"}).content.decode()
    assert "config.inductor.cpp.cxx: refused: &#x27;cxx&#x27; in its name" in page
    assert Build.objects.count() == 1


@pytest.mark.parametrize("command, argv", [
    ("register_build", ["--python", "/no/such/python"]),
    ("schedule_run", ["--machine-class", "cpu", "--hour", "2"]),
])
def test_management_commands_exit_2_naming_the_refused_setting(base, command, argv):
    from django_celery_beat.models import PeriodicTask

    for flag, field in ((["--env", "TRITON_PTXAS_PATH=/tmp/evil.sh"], "env.TRITON_PTXAS_PATH"),
                        (["--config", "inductor.cpp.cxx=/tmp/evil.sh"], "config.inductor.cpp.cxx")):
        with pytest.raises(CommandError) as refused:
            call_command(command, *argv, *flag, stdout=io.StringIO(), stderr=io.StringIO())
        assert refused.value.returncode == 2 and f"{field}: refused" in str(refused.value)
    assert stored() == (1, 0, 0, 0) and not PeriodicTask.objects.filter(task="dispatch.scheduled_run").exists()


def test_a_scheduled_nightly_with_such_a_setting_fails_naming_it_and_stores_nothing(base):
    from contract.variants import InvalidOverride
    from dashboard.dispatch.tasks import scheduled_run

    with pytest.raises(InvalidOverride, match="env.TRITON_PTXAS_PATH: refused"):
        scheduled_run(build=SHA[:12], machine_class="cpu", size="tiny", env={"TRITON_PTXAS_PATH": "/tmp/evil.sh"})
    assert stored() == (1, 0, 0, 0)
