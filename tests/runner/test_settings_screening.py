"""Issue #33 item 1, runner side: the CLI refuses a setting that is not data (exit 2) unless the
machine's PTBENCH_ALLOW_SETTINGS admits it; a worker's PTBENCH_BUILDS variants obey the same rule;
``measure_case`` screens every message before it looks for an interpreter or runs anything."""
from __future__ import annotations

import pytest

from contract.settings_policy import Allowance, SettingsRefused
from runner.cli import main
from runner.worker.builds import LocalBuilds
from runner.worker.config import ConfigError, WorkerConfig
from runner.worker.measure import measure_case
from runner.worker.screening import message_settings_problems

SCALAR = "tests.runner.sample_workloads:ScalarItem"
EVIL = "TRITON_PTXAS_PATH=/tmp/evil.sh"


@pytest.mark.parametrize("argv, named", [
    (["--env", EVIL], "env.TRITON_PTXAS_PATH"),
    (["--config", "inductor.cpp.cxx=/tmp/evil.sh"], "config.inductor.cpp.cxx"),
    (["--config", "inductor.fx_graph_remote_cache=true"], "config.inductor.fx_graph_remote_cache"),
])
def test_the_cli_refuses_a_setting_that_is_not_data_with_exit_2(tmp_path, capsys, monkeypatch, argv, named):
    monkeypatch.delenv("PTBENCH_ALLOW_SETTINGS", raising=False)
    out = tmp_path / "run.json"
    with pytest.raises(SystemExit) as exited:
        main(["run", "--workloads", SCALAR, "--regimes", "static", "--backend", "eager", "--out", str(out), *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{named}: refused" in err and "docs/variants-and-settings.md" in err
    assert not out.exists()


def test_the_cli_names_a_malformed_allowance_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PTBENCH_ALLOW_SETTINGS", "not/a/name")
    with pytest.raises(SystemExit) as exited:
        main(["run", "--workloads", SCALAR, "--backend", "eager", "--out", str(tmp_path / "r.json"), "--env", EVIL])
    assert exited.value.code == 2 and "PTBENCH_ALLOW_SETTINGS: 'not/a/name'" in capsys.readouterr().err


def test_a_workers_variants_and_allowance_come_from_its_environment():
    variant = "/usr/bin/python3;env=TRITON_PTXAS_PATH=/opt/cuda/bin/ptxas"
    with pytest.raises(ConfigError, match="env.TRITON_PTXAS_PATH: refused"):
        WorkerConfig.from_env({"PTBENCH_BUILDS": variant})
    config = WorkerConfig.from_env({"PTBENCH_BUILDS": variant, "PTBENCH_ALLOW_SETTINGS": "TRITON_PTXAS_PATH=/opt/cuda/bin/ptxas"})
    assert config.builds[0].overrides.env == {"TRITON_PTXAS_PATH": "/opt/cuda/bin/ptxas"}
    assert config.allow.admits("TRITON_PTXAS_PATH", "/opt/cuda/bin/ptxas")
    assert not config.allow.admits("TRITON_PTXAS_PATH", "/tmp/evil.sh")
    with pytest.raises(ConfigError, match="PTBENCH_ALLOW_SETTINGS"):
        WorkerConfig.from_env({"PTBENCH_ALLOW_SETTINGS": "../x"})
    assert not WorkerConfig.from_env({}).allow  # nothing beyond data by default


def message(spec_env=None, spec_config=None, build_overrides=None) -> dict:
    spec = {"workload": SCALAR, "compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu",
            "backend": "eager", "size": "tiny", "config_overrides": spec_config or {}, "env_overrides": spec_env or {}}
    build = {"git_sha": "cf30153c4c13", "local_label": "x", "torch_version": "2.13.0", "label": "",
             **({"overrides": build_overrides} if build_overrides else {})}
    return {"case_id": 1, "run_id": "r", "build": build, "size": "tiny", "spec": spec,
            "workload": {"name": SCALAR}, "timeout_s": 60}


@pytest.mark.parametrize("forged, field", [
    (message(spec_env={"TRITON_PTXAS_PATH": "/tmp/evil.sh"}), "spec.env.TRITON_PTXAS_PATH"),
    (message(spec_config={"inductor.cpp.cxx": "/tmp/evil.sh"}), "spec.config.inductor.cpp.cxx"),
    (message(spec_env="TRITON_PTXAS_PATH=/tmp/evil.sh"), "spec.env"),
    (message(build_overrides={"env": {"LD_PRELOAD": "/tmp/evil.so"}}), "build.overrides.env.LD_PRELOAD"),
])
def test_a_forged_message_is_refused_before_anything_runs(forged, field):
    started = []
    with pytest.raises(SettingsRefused) as refused:  # an empty LocalBuilds would raise BuildUnavailable later
        measure_case(**forged, local=LocalBuilds(), machine_class="cpu", worker={}, notify_started=lambda: started.append(1))
    assert [p["field"] for p in refused.value.problems] == [field] and not started
    assert f"settings refused, nothing was run: {field}" in str(refused.value)


def test_the_allowance_of_the_worker_admits_what_it_lists_and_no_more():
    allow = Allowance.parse("TRITON_PTXAS_PATH=/opt/cuda/bin/ptxas")
    admitted = message(spec_env={"TRITON_PTXAS_PATH": "/opt/cuda/bin/ptxas"},
                       build_overrides={"config": {}, "env": {"TRITON_PTXAS_PATH": "/opt/cuda/bin/ptxas"}})
    assert message_settings_problems(spec=admitted["spec"], build=admitted["build"], allow=allow) == []
    other = message(spec_env={"TRITON_PTXAS_PATH": "/tmp/evil.sh"})
    assert message_settings_problems(spec=other["spec"], build=other["build"], allow=allow)[0]["field"] == "spec.env.TRITON_PTXAS_PATH"
