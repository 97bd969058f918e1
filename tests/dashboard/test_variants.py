"""Build variants on the dashboard (issue #16) on SQLite: stored at ingest, refused naming the key
through every entry point, and the A/B selector's verdicts against noise."""
from __future__ import annotations

import io
import sys

import pytest
from django.core.management import CommandError, call_command

from contract.variants import Overrides, variant_label
from dashboard.dispatch.services.runs import _spec_dict, variant_repro
from dashboard.results.models import Build, Run
from contract.metrics import BY_NAME as METRIC
from dashboard.regressions.ab import ab_compare, ab_rows_select
from dashboard.regressions.noise import TWO_RUNS_95
from dashboard.results.services import run_ingest
from contract.document import InvalidDocument
from runner.worker.config import ConfigError, parse_builds
from tests.fixtures.api import fields
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"
CDT = Overrides.build({"inductor.coordinate_descent_tuning": True})


def variant_document(overrides: Overrides = CDT, results=None, local_label: str | None = None) -> dict:
    document = make_document(results=results)
    document["build"]["overrides"] = overrides.as_document()
    document["build"]["local_label"] = variant_label("", overrides) if local_label is None else local_label
    return document


def test_ingest_stores_the_overrides_of_a_variant_as_its_own_build():
    run_ingest(document=make_document())
    run_ingest(document=variant_document())
    base, variant = Build.objects.get(local_label=""), Build.objects.exclude(local_label="").get()
    assert base.overrides == {} and variant.overrides == {"config": {"inductor.coordinate_descent_tuning": True}, "env": {}}
    assert variant.local_label.startswith("coordinate_descent_tuning.") and variant.git_sha == base.git_sha


def test_ingest_refuses_other_overrides_under_one_label_but_not_a_label_of_its_own():
    run_ingest(document=variant_document(local_label="my-label"))  # the runner names it: fine
    other = Overrides.build({"inductor.coordinate_descent_tuning": False})
    with pytest.raises(InvalidDocument) as refused:
        run_ingest(document=variant_document(other, local_label="my-label"))
    assert [e.field for e in refused.value.errors] == ["build.overrides"]
    assert Run.objects.count() == 1


@pytest.mark.parametrize("overrides, field", [
    ({"env": {"TORCHINDUCTOR_CACHE_DIR": "/tmp/x"}}, "build.overrides.env.TORCHINDUCTOR_CACHE_DIR"),
    ({"config": {"inductor.max_autotune": [1]}}, "inductor.max_autotune"),
    ({"config": {"cudnn.benchmark": True}}, "cudnn.benchmark"),
])
def test_ingest_refuses_a_bad_override_naming_it_and_stores_nothing(overrides, field):
    document = make_document()
    document["build"]["overrides"] = overrides
    with pytest.raises(InvalidDocument) as refused:
        run_ingest(document=document)
    assert any(field in f"{e.field} {e.message}" for e in refused.value.errors), refused.value.errors
    assert Build.objects.count() == 0


# A base build's config catalog as a probe records it (runner.engine.overrides.config_catalog).
CATALOG = {"torch_version": "2.13.0", "sections": {
    "inductor": {"coordinate_descent_tuning": {"type": "bool"}, "max_autotune": {"type": "bool"},
                 "max_fusion_size": {"type": "int"}, "max_autotune_gemm_backends": {"type": "str"},
                 "triton.persistent_reductions": {"type": "bool"}},
    "dynamo": {"capture_scalar_outputs": {"type": "bool"}}, "functorch": {}}}


def probed(ref: str) -> Build:
    build = Build.objects.get(git_sha=SHA, local_label=ref)
    build.config_catalog = CATALOG
    build.save(update_fields=["config_catalog"])
    return build


def test_api_build_registration_derives_the_variant_label_and_names_a_bad_key(writer):
    body = {"torch_version": "2.13.0", "git_sha": SHA, "local_label": "cu130"}
    base = writer.post("/api/v1/builds/", body, format="json").json()
    assert writer.get(f"/api/v1/builds/{base['ref']}/").json()["probed"] is False
    probed("cu130")
    assert writer.get(f"/api/v1/builds/{base['ref']}/").json()["probed"] is True
    created = writer.post("/api/v1/builds/", {**body, "config": {"inductor.coordinate_descent_tuning": True},
                                              "env": {"TORCHINDUCTOR_FREEZING": "1"}}, format="json")
    assert created.status_code == 201, created.json()
    variant = created.json()
    overrides = Overrides.build({"inductor.coordinate_descent_tuning": True}, {"TORCHINDUCTOR_FREEZING": "1"})
    assert variant["local_label"] == variant_label("cu130", overrides) and variant["overrides"] == overrides.as_document()
    assert variant["base"]["ref"] == base["ref"] and base["base"] is None
    assert variant["probed"] is True  # its base's catalog is its own torch's
    for bad, field in (({"config": {"triton.x": 1}}, "config.triton.x"), ({"config": {"inductor.x": {"a": 1}}}, "config.inductor.x"),
                       ({"env": {"PATH": "/bin"}}, "env.PATH"), ({"env": {"TORCH_X": 1}}, "env.TORCH_X"),
                       # checked against the base build's torch: a key it lacks, a value of the wrong type
                       ({"config": {"inductor.no_such_key": True}}, "config.inductor.no_such_key"),
                       ({"config": {"inductor.max_fusion_size": "four"}}, "config.inductor.max_fusion_size")):
        refused = writer.post("/api/v1/builds/", {**body, **bad}, format="json")
        assert refused.status_code == 400 and fields(refused) == [field], refused.json()
    refused = writer.post("/api/v1/builds/", {**body, "config": {"inductor.nope": 1, "dynamo.capture_scalar_outputs": 1}},
                          format="json")
    assert fields(refused) == ["config.dynamo.capture_scalar_outputs", "config.inductor.nope"]  # every bad key named
    assert "torch 2.13.0 has no inductor config key 'nope'" in refused.json()["errors"][1]["message"]
    assert Build.objects.count() == 2


def test_api_variant_of_a_base_never_probed_is_409_naming_config_and_stores_nothing(writer, django_capture_on_commit_callbacks):
    from dashboard.dispatch.models import BuildEnvironment

    body = {"torch_version": "2.13.0", "git_sha": SHA, "local_label": "cu130"}
    refused = writer.post("/api/v1/builds/", {**body, "config": {"inductor.max_autotune": True}}, format="json")
    assert refused.status_code == 409 and fields(refused) == ["config"]
    assert "is not stored" in refused.json()["detail"] and not Build.objects.exists()
    assert writer.post("/api/v1/builds/", body, format="json").status_code == 201
    base = Build.objects.get()
    BuildEnvironment.objects.create(build=base, machine_class="gpu-h100", hostname="h", python="/opt/p", source="worker",
                                    reported_at=base.created_at)
    with django_capture_on_commit_callbacks() as sent:  # the probe message goes out once the request commits
        refused = writer.post("/api/v1/builds/", {**body, "config": {"inductor.max_autotune": True}}, format="json")
    assert refused.status_code == 409 and fields(refused) == ["config"]
    assert "has not been probed yet" in refused.json()["detail"] and "asked a worker of gpu-h100" in refused.json()["detail"]
    assert len(sent) == 1
    # env overrides alone need no catalog (their names are all there is to check)
    assert writer.post("/api/v1/builds/", {**body, "env": {"TORCHINDUCTOR_FREEZING": "1"}}, format="json").status_code == 201
    # a run request asks the requested class's workers
    request = {"build": SHA[:12] + "+cu130", "machine_class": "cpu", "size": "tiny", "cases_expected": 3,
               "config": {"inductor.max_autotune": True}}
    with django_capture_on_commit_callbacks() as sent:
        refused = writer.post("/api/v1/runs/", request, format="json")
    assert refused.status_code == 409 and fields(refused) == ["config"] and "asked a worker of cpu" in refused.json()["detail"]
    assert len(sent) == 1 and Run.objects.count() == 0 and Build.objects.count() == 2


def test_api_run_request_runs_the_variant_and_names_a_bad_key(writer):
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": SHA}, format="json")
    probed("")
    request = {"build": SHA[:12], "machine_class": "cpu", "size": "tiny", "cases_expected": 3}
    refused = writer.post("/api/v1/runs/", {**request, "config": {"inductor.max autotune": True}}, format="json")
    assert refused.status_code == 400 and fields(refused) == ["config.inductor.max autotune"]
    refused = writer.post("/api/v1/runs/", {**request, "env": {"HOME": "/"}}, format="json")
    assert refused.status_code == 400 and fields(refused) == ["env.HOME"]
    refused = writer.post("/api/v1/runs/", {**request, "config": {"inductor.max_autotune_gemm_backends": False}}, format="json")
    assert refused.status_code == 400 and fields(refused) == ["config.inductor.max_autotune_gemm_backends"]
    assert "expects a string" in refused.json()["detail"]
    assert Run.objects.count() == 0 and Build.objects.count() == 1
    made = writer.post("/api/v1/runs/", {**request, "config": {"inductor.coordinate_descent_tuning": True}}, format="json")
    assert made.status_code == 201, made.json()
    assert Run.objects.get().build.local_label == variant_label("", CDT)


def test_register_build_refuses_a_bad_override_with_exit_2_before_probing():
    for argv, field in ((["--config", "inductor.x=1", "--config", "nosection=1"], "config.nosection"),
                        (["--env", "LD_PRELOAD=x"], "env.LD_PRELOAD"), (["--config", "inductor.x"], "--config")):
        with pytest.raises(CommandError) as refused:
            call_command("register_build", "--python", "/no/such/python", *argv, stdout=io.StringIO(), stderr=io.StringIO())
        assert refused.value.returncode == 2 and field in str(refused.value)
    assert Build.objects.count() == 0


def test_register_build_registers_the_variant(monkeypatch):
    from runner.engine import executor

    environment = {"build": {"torch_version": "2.13.0", "git_sha": SHA, "local_label": "cpu"}, "machine": {}}
    monkeypatch.setattr(executor, "probe_environment", lambda python, **_: {**environment, "build": dict(environment["build"])})
    out = io.StringIO()
    call_command("register_build", "--python", sys.executable, "--config", "dynamo.capture_scalar_outputs=true",
                 stdout=out, stderr=io.StringIO())
    call_command("register_build", "--python", sys.executable, stdout=io.StringIO(), stderr=io.StringIO())
    overrides = Overrides.build({"dynamo.capture_scalar_outputs": True})
    assert out.getvalue().strip() == f"{SHA[:12]}+{variant_label('cpu', overrides)}"
    assert sorted(Build.objects.values_list("local_label", flat=True)) == ["cpu", variant_label("cpu", overrides)]
    assert Build.objects.get(local_label="cpu").environments.count() == 1  # one interpreter, a row per build


def test_a_variants_cases_carry_its_overrides_in_spec_and_repro():
    from contract.spec import CaseSpec

    def Spec():  # noqa: N802 (stands for the class it builds)
        return CaseSpec(workload="mlp_loop", compile_mode="default", shape_regime="static", dtype="float32", device="cpu")

    overrides = Overrides.build({"inductor.max_autotune": True}, {"TORCHINDUCTOR_FREEZING": "1"})
    assert _spec_dict(Spec(), overrides)["config_overrides"] == {"inductor.max_autotune": True}
    assert _spec_dict(Spec(), overrides)["env_overrides"] == {"TORCHINDUCTOR_FREEZING": "1"}
    assert "config_overrides" not in _spec_dict(Spec(), Overrides())
    # The runner's case spec takes exactly these fields (a message's spec becomes a CaseSpec).
    spec = CaseSpec(**_spec_dict(Spec(), overrides))
    assert spec.config_overrides == {"inductor.max_autotune": True}
    assert variant_repro("python -m runner run", overrides).endswith(
        "--config inductor.max_autotune=true --env TORCHINDUCTOR_FREEZING=1")


def test_ptbench_builds_declares_variants_and_names_a_bad_key():
    base, variant = parse_builds("/opt/t/python,cu=/opt/t/python;config=inductor.max_autotune=true;env=TORCHINDUCTOR_FREEZING=1")
    assert (base.python, base.overrides) == ("/opt/t/python", Overrides())
    assert (variant.python, variant.local_label) == ("/opt/t/python", "cu")
    assert variant.overrides == Overrides.build({"inductor.max_autotune": True}, {"TORCHINDUCTOR_FREEZING": "1"})
    for bad, named in (("/p;config=foo.x=1", "config.foo.x"), ("/p;env=HOME=/", "env.HOME"), ("/p;flag=1", "flag=1")):
        with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
            parse_builds(bad)


# --- the A/B selector ----------------------------------------------------------------------------
def _ab(base_metrics: dict, variant_metrics: dict):
    run_ingest(document=make_document(results=[make_result("mlp_loop", r, **base_metrics) for r in ("static", "backed")]))
    run_ingest(document=variant_document(results=[make_result("mlp_loop", r, **variant_metrics) for r in ("static", "backed")]))
    base, variant = Build.objects.get(local_label=""), Build.objects.exclude(local_label="").get()
    return ab_compare(base=base, variant=variant, machine_class="cpu")


def test_ab_a_change_within_noise_is_no_change_and_past_it_worse_or_better():
    # One base build, no history: each series' noise is the metric's default run-to-run sd, and a
    # change is "no change" within where two runs differ 95 % of the time (1.96 x sqrt(2) x sd).
    # speedup +1.6% is within 2% x 2.77; latency +20% past it; compile time -5% within 20% x 2.77;
    # memory -30% is better; one more graph break is worse.
    ab = _ab({"speedup": 1.25}, {"speedup": 1.27, "compiled_latency_ms": 2.4, "compile_time_cold_s": 7.5 * 0.95,
                                 "compiled_peak_memory_bytes": 700_000, "graph_break_count": 2})
    row = ab.rows[0]
    assert row.cells["speedup"].tone == "same" and row.cells["speedup"].noise == pytest.approx(TWO_RUNS_95 * 0.02)
    assert row.cells["compiled_latency_ms"].tone == "worse"
    assert row.cells["compile_time_cold_s"].tone == "same"
    assert row.cells["compile_time_cold_s"].noise == pytest.approx(TWO_RUNS_95 * METRIC["compile_time_cold_s"].noise_default)
    assert row.cells["compiled_peak_memory_bytes"].tone == "better"
    assert (row.cells["graph_break_count"].change, row.cells["graph_break_count"].tone) == (1, "worse")
    assert row.cells["recompile_count"].tone == "same" and row.changed


def test_ab_speedup_past_noise_and_the_geomean_row_per_configuration():
    ab = _ab({"speedup": 1.0, "speedup_noise": 0.005}, {"speedup": 1.1, "speedup_noise": 0.005})
    assert [r.cells["speedup"].tone for r in ab.rows] == ["better", "better"]
    assert [(g.config, g.cases) for g in ab.geomeans] == [("default · backed · float32", 1), ("default · static · float32", 1)]
    geo = ab.geomeans[0].cells["speedup"]
    assert (geo.base, geo.variant, geo.tone) == (pytest.approx(1.0), pytest.approx(1.1), "better")
    row_noises = [r.cells["speedup"].noise for r in ab.rows if r.config == ab.geomeans[0].config]
    assert geo.change == pytest.approx(0.1) and geo.noise == pytest.approx(sum(row_noises) / len(row_noises))


def test_ab_rows_filter_and_sort():
    ab = _ab({"speedup": 1.0}, {"speedup": 1.0})
    assert ab_rows_select(rows=ab.rows, only_changed=True) == []
    assert [r.config for r in ab_rows_select(rows=ab.rows, config="default · static · float32")] == ["default · static · float32"]
    assert ab_rows_select(rows=ab.rows, workload="resnet") == []
    assert [r.config for r in ab_rows_select(rows=ab.rows, sort="config", descending=True)][0].startswith("default · static")


def test_schedule_run_schedules_a_nightly_variant_and_refuses_a_bad_key():
    from django_celery_beat.models import PeriodicTask

    with pytest.raises(CommandError) as refused:
        call_command("schedule_run", "--machine-class", "cpu", "--env", "CUDA_VISIBLE_DEVICES=1", stdout=io.StringIO())
    assert refused.value.returncode == 2 and "env.CUDA_VISIBLE_DEVICES" in str(refused.value)
    call_command("schedule_run", "--machine-class", "cpu", stdout=io.StringIO())
    call_command("schedule_run", "--machine-class", "cpu", "--config", "inductor.max_autotune=true", stdout=io.StringIO())
    tasks = PeriodicTask.objects.filter(task="dispatch.scheduled_run").order_by("name")
    assert tasks.count() == 2  # the variant's nightly does not replace its base's
    assert '"config": {"inductor.max_autotune": true}' in tasks.last().kwargs


def test_a_variant_never_becomes_a_point_of_its_base_builds_trends_or_detection_history():
    from dashboard.regressions.history import series_points
    from dashboard.results.models import Result, Series
    from dashboard.results.selectors.workloads import series_history, workload_latest

    run_ingest(document=make_document(results=[make_result()]))
    run_ingest(document=variant_document(results=[make_result(speedup=0.5)]))
    series = Series.objects.get()
    assert Result.objects.filter(series=series).count() == 2  # both stored, on the same series
    base = Build.objects.get(overrides={})
    assert [p.build_id for p in series_points(series_id=series.id)] == [base.id]
    history = series_history(series=series)
    assert {point.build_id for point in history.points} == {base.id}
    assert [r.build_id for r in workload_latest(workload=series.workload, machine_class=series.machine_class)] == [base.id]


def test_register_build_checks_a_variants_keys_against_the_builds_own_torch():
    err = io.StringIO()
    with pytest.raises(CommandError, match="config.inductor.no_such_key_in_this_torch"):
        call_command("register_build", "--python", sys.executable, "--config", "inductor.no_such_key_in_this_torch=1",
                     stdout=io.StringIO(), stderr=err)
    with pytest.raises(CommandError, match="config.inductor.max_fusion_size: expects an integer"):  # 2.5: data, not an int
        call_command("register_build", "--python", sys.executable, "--config", "inductor.max_fusion_size=2.5",
                     stdout=io.StringIO(), stderr=err)
    assert not Build.objects.exists()
    # A build registered is probed with its config catalog: the API and the admin check variants against it.
    call_command("register_build", "--python", sys.executable, "--config", "inductor.max_fusion_size=4",
                 stdout=io.StringIO(), stderr=err)
    variant = Build.objects.get()
    catalog = variant.config_catalog
    assert catalog["torch_version"].startswith(variant.torch_version.split("+")[0])
    assert catalog["sections"]["inductor"]["max_fusion_size"] == {"type": "int"}
    assert catalog["sections"]["inductor"]["triton.persistent_reductions"] == {"type": "bool"}
    assert catalog["sections"]["dynamo"]["capture_scalar_outputs"] == {"type": "bool"}
    assert catalog["sections"]["functorch"]  # all three sections
    # reported apart, never in the environment that run documents carry
    assert "config_catalog" not in variant.environment and "config_catalog" not in variant.environments.get().environment


def test_admin_variant_of_a_base_never_probed_names_config_and_stores_nothing(admin_client):
    run_ingest(document=make_document())
    base = Build.objects.get()
    form = {"action": "create_variant", "_selected_action": [base.pk], "apply": "1"}
    page = admin_client.post("/admin/results/build/", {**form, "config": "inductor.max_autotune=true"}).content.decode()
    assert "config: build " in page and "has not been probed yet" in page
    page = admin_client.post("/admin/results/build/", {**form, "config": "cudnn.benchmark=true"}).content.decode()
    assert "config.cudnn.benchmark: not a config key" in page
    page = admin_client.post("/admin/results/build/", {**form, "env": "HOME=/"}).content.decode()
    assert "env.HOME: not an allowed variable" in page
    assert Build.objects.count() == 1
