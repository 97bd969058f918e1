"""Build variants (issue #16), runner side: overrides checked before any case, applied in the case
process, recorded in the document with the variant's own label, and carried by the repro command."""
from __future__ import annotations

import json
import sys

import pytest

from contract.variants import InvalidOverride, Overrides, apply_variant, variant_label
from runner.cli import main
from runner.engine.executor import CaseExecutor
from runner.engine.overrides import check_config
from contract.planning import plan_cases
from contract.spec import CaseSpec, TimingBudget
from tests.runner.sample_workloads import ScalarItem

QUICK = TimingBudget(budget_s=0.05, target_block_s=0.002, warmup_s=0.01, min_pairs=3)
SCALAR = "tests.runner.sample_workloads:ScalarItem"


@pytest.mark.parametrize("config, env, field", [
    (["inductor"], [], "--config"),
    (["torch.compile_threads=1"], [], "config.torch.compile_threads"),
    (["inductor.a b=1"], [], "config.inductor.a b"),
    ([], ["HOME=/tmp"], "env.HOME"),
    ([], ["TORCHINDUCTOR_CACHE_DIR=/tmp/x"], "env.TORCHINDUCTOR_CACHE_DIR"),
    ([], ["torch_logs=1"], "env.torch_logs"),
])
def test_malformed_overrides_are_refused_naming_the_override(config, env, field):
    with pytest.raises(InvalidOverride) as refused:
        Overrides.from_cli(config, env)
    assert refused.value.field == field


def test_values_are_typed_and_the_label_tells_variants_apart():
    overrides = Overrides.from_cli(["inductor.coordinate_descent_tuning=true", "inductor.max_fusion_size=1"], ["TORCH_LOGS=x"])
    assert overrides.config == {"inductor.coordinate_descent_tuning": True, "inductor.max_fusion_size": 1}
    label = variant_label("cu130", overrides)
    assert label.startswith("cu130.coordinate_descent_tuning.max_fusion_size-1.") and len(label) <= 100
    other = Overrides.from_cli(["inductor.max_fusion_size=2"], None)
    assert variant_label("cu130", other) != label
    assert variant_label("cu130", Overrides.from_cli(["inductor.coordinate_descent_tuning=true", "inductor.max_fusion_size=1"], ["TORCH_LOGS=x"])) == label
    assert variant_label("cu130", Overrides()) == "cu130"  # the base build keeps its label
    assert len(variant_label("x" * 100, overrides)) <= 100
    build = apply_variant({"torch_version": "2.13.0", "git_sha": "a" * 40, "local_label": "cpu"}, other)
    assert build["overrides"] == {"config": {"inductor.max_fusion_size": 2}, "env": {}}
    assert build["git_sha"] == "a" * 40 and build["local_label"] != "cpu"


def test_keys_and_types_are_checked_against_this_torch():
    assert check_config({"inductor.max_fusion_size": 4, "inductor.triton.persistent_reductions": False,
                         "dynamo.capture_scalar_outputs": True}) == []
    problems = {p["field"]: p["message"] for p in check_config(
        {"inductor.no_such_key": 1, "inductor.max_fusion_size": "four", "dynamo.capture_scalar_outputs": 1})}
    assert "has no inductor config key 'no_such_key'" in problems["config.inductor.no_such_key"]
    assert "expects an integer" in problems["config.inductor.max_fusion_size"]
    assert "expects true or false" in problems["config.dynamo.capture_scalar_outputs"]


@pytest.mark.parametrize("argv, named", [
    (["--config", "inductor.no_such_key=1"], "config.inductor.no_such_key"),
    (["--config", "inductor.max_fusion_size=four"], "config.inductor.max_fusion_size"),
    (["--env", "PATH=/bin"], "env.PATH"),
])
def test_the_cli_refuses_a_bad_override_before_any_case(tmp_path, capsys, argv, named):
    out = tmp_path / "run.json"
    with pytest.raises(SystemExit) as exited:
        main(["run", "--workloads", SCALAR, "--regimes", "static", "--backend", "eager", "--out", str(out), *argv])
    assert exited.value.code == 2
    assert named in capsys.readouterr().err
    assert not out.exists()


def run_variant(tmp_path, config=None, env=None) -> dict:
    overrides = Overrides.build(config, env)
    [case] = plan_cases([(SCALAR, ScalarItem())], modes=["default"], regimes=["static"], dtypes=None, device="cpu",
                        backend="eager", size="tiny", import_allowed=True, overrides=overrides).cases
    spec = CaseSpec(**{**case.spec.__dict__, "timing": QUICK})
    return CaseExecutor(python=sys.executable, timeout_s=120, warm=False).run(spec, workload_name=case.workload_name, repro=case.repro)


@pytest.mark.slow
def test_a_dynamo_setting_or_its_variable_removes_a_real_graph_break(tmp_path):
    base = run_variant(tmp_path)
    by_config = run_variant(tmp_path, config={"dynamo.capture_scalar_outputs": True})
    by_env = run_variant(tmp_path, env={"TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "1"})
    assert base["status"] == by_config["status"] == by_env["status"] == "pass"
    assert base["metrics"]["graph_break_count"] == 1 and "item" in json.dumps(base["graph_breaks"])
    assert by_config["metrics"]["graph_break_count"] == 0
    assert by_env["metrics"]["graph_break_count"] == 0
    assert "--config dynamo.capture_scalar_outputs=true" in by_config["repro"]
    assert "--env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1" in by_env["repro"]
    assert "--config" not in base["repro"]


# --- the config catalog: what the dashboard checks a variant's keys against, without torch ---------
def test_the_catalog_describes_declared_types_across_the_config_module_layouts():
    """``_config`` entries with a ``value_type`` (torch 2.5+, 2.11, 2.13), ``_default`` dicts (2.1-2.4),
    and plain module attributes: each read into the same entries."""
    import types
    import typing

    from runner.engine.overrides import _module_entries

    class Entry:
        def __init__(self, default, value_type=None):
            self.default, self.value_type = default, value_type

    new = types.SimpleNamespace(_config={
        "flag": Entry(False, bool), "size": Entry(64, int), "name": Entry(None, typing.Optional[str]),
        "mode": Entry("a", typing.Literal["a", "b"]), "passes": Entry(None, typing.Optional[list[int]]),
        "either": Entry(True, bool | str), "untyped": Entry(0.5), "unknown": Entry(None)})
    entries = _module_entries(new)
    assert entries["flag"] == {"type": "bool"} and entries["size"] == {"type": "int"}
    assert entries["name"] == {"type": "str", "nullable": True} and entries["untyped"] == {"type": "float"}
    assert entries["mode"] == {"type": "str", "choices": ["a", "b"]} and entries["either"] == {"type": "bool|str"}
    assert entries["passes"] == {"type": "list", "nullable": True} and entries["unknown"] == {"type": "any", "nullable": True}
    old = types.SimpleNamespace(_default={"flag": True, "threads": 4})
    assert _module_entries(old) == {"flag": {"type": "bool"}, "threads": {"type": "int"}}
    plain = types.ModuleType("plain_config")
    plain.flag, plain._private = False, 1
    assert _module_entries(plain) == {"flag": {"type": "bool"}}


@pytest.mark.parametrize("value, entry, problem", [
    (True, {"type": "bool"}, None), (1, {"type": "bool"}, "expects true or false"),
    (3, {"type": "int"}, None), (True, {"type": "int"}, "expects an integer"), (2.5, {"type": "int"}, "expects an integer"),
    (2, {"type": "float"}, None), ("x", {"type": "float"}, "expects a number"),
    ("TRITON", {"type": "str"}, None), (None, {"type": "str"}, None), (False, {"type": "bool|str"}, None),
    ("c", {"type": "str", "choices": ["a", "b"]}, "expects one of a, b"), ("a", {"type": "str", "choices": ["a"]}, None),
    ("x", {"type": "list"}, "expects a list, which the command line cannot give"), ({"a": 1}, {"type": "any"}, None),
])
def test_catalog_entry_problem(value, entry, problem):
    from contract.variants import catalog_entry_problem

    assert catalog_entry_problem(value, entry) == problem


def test_catalog_problems_name_each_key_as_the_builds_own_check_does():
    from contract.variants import catalog_problems

    catalog = {"torch_version": "2.11.0", "sections": {"inductor": {"max_fusion_size": {"type": "int"}}}}
    assert catalog_problems({"inductor.max_fusion_size": "four", "dynamo.x": 1, "inductor.max_fusion_size_": 1}, catalog) == [
        {"field": "config.inductor.max_fusion_size", "message": "expects an integer (got 'four')"},
        {"field": "config.dynamo.x", "message": "torch 2.11.0 has no dynamo config key 'x'"},
        {"field": "config.inductor.max_fusion_size_", "message": "torch 2.11.0 has no inductor config key 'max_fusion_size_'"},
    ]


def test_a_worker_finds_the_base_interpreter_of_a_variant_made_on_the_dashboard():
    from runner.worker.builds import BuildUnavailable, LocalBuild, LocalBuilds

    base = LocalBuild(python="/opt/t/python", environment={"build": {"git_sha": "a" * 40, "local_label": "cu130"}},
                      catalog={"sections": {}})
    local = LocalBuilds(builds=[base])
    overrides = Overrides.build({"inductor.max_autotune": True})
    found = local.find(git_sha="a" * 40, local_label=variant_label("cu130", overrides), overrides=overrides.as_document())
    assert found.python == base.python and found.environment["build"]["overrides"] == overrides.as_document()
    assert found.environment["build"]["local_label"] == variant_label("cu130", overrides)
    assert base.environment["build"] == {"git_sha": "a" * 40, "local_label": "cu130"}  # the base's unchanged
    with pytest.raises(BuildUnavailable):  # a label that is not the base's variant with these overrides
        local.find(git_sha="a" * 40, local_label="other.abc123", overrides=overrides.as_document())
