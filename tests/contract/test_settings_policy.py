"""Issue #33 item 1, the pure rule (``contract.settings_policy``): which settings are data, the
operator's allowance, and ``Overrides.build`` applying both. No database, no services."""
from __future__ import annotations

import pytest

from contract.settings_policy import (
    DATA_ONLY,
    RECORDED,
    Allowance,
    config_problem,
    env_problem,
    service_word,
    settings_refused,
)
from contract.variants import InvalidOverride, Overrides

NOT_DATA_ENV = [("TRITON_PTXAS_PATH", "/tmp/evil.sh"), ("TRITON_PTXAS_PATH", "true"), ("TRITON_LIBCUDA_PATH", "/x"),
                ("TRITON_HOME", "/tmp"), ("TORCH_EXTENSIONS_DIR", "/tmp"), ("TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE", "1"),
                ("TORCHINDUCTOR_REDIS_HOST", "evil.example"), ("TRITON_CACHE_MANAGER", "evil:Manager"),
                ("TORCH_LOGS", "$(sh /tmp/x)"), ("TORCH_LOGS", "dynamo;sh"), ("TORCHINDUCTOR_X", "/bin/sh"),
                ("TORCHINDUCTOR_X", "a b"), ("TORCHINDUCTOR_X", "module.attr"), ("TORCHINDUCTOR_X", "~/x"),
                ("TORCH_COMPILE_OVERRIDE_BACKENDS", "x"), ("TORCHINDUCTOR_CPP_CXX", "g++"),
                ("TORCHINDUCTOR_CPP_COMPILER", "1")]
DATA_ENV = [("TORCHINDUCTOR_FREEZING", "1"), ("TORCHINDUCTOR_COMPILE_THREADS", "4"), ("TORCHDYNAMO_VERBOSE", "true"),
            ("TORCHINDUCTOR_CPP_WRAPPER", "0"), ("TORCH_LOGS", "+dynamo,recompiles,torch._inductor"),
            ("TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "ATEN,TRITON"), ("TORCHINDUCTOR_WORKER_START", "subprocess"),
            ("TORCHINDUCTOR_X", ""), ("TORCHINDUCTOR_X", "0.5"), ("TORCHINDUCTOR_X", "off")]
NOT_DATA_CONFIG = [("inductor.cpp.cxx", "/tmp/evil.sh"), ("inductor.cpp.cxx", None), ("inductor.cuda.cuda_cxx", "gcc"),
                   ("inductor.cuda.cutlass_dir", "/tmp"), ("inductor.trace.debug_dir", "/etc"),
                   ("inductor.aot_inductor.aoti_shim_library_path", "x"), ("inductor.fx_graph_remote_cache", True),
                   ("dynamo.automatic_dynamic_remote_pgo", True), ("inductor.post_grad_custom_post_pass", "os.system"),
                   ("inductor.cpp.march", "native -fplugin=/tmp/evil.so"), ("inductor._profile_var", "1"),
                   ("dynamo.debug_inductor_config_override", "cpp.cxx=sh"), ("inductor.max_fusion_size", "four"),
                   ("inductor.max_autotune_gemm_backends", "ATEN;TRITON"), ("inductor.memory_pool", "evil")]
DATA_CONFIG = [("inductor.coordinate_descent_tuning", True), ("inductor.max_fusion_size", 1), ("inductor.x", 0.5),
               ("inductor.cuda.enable_ptxas_info", True), ("inductor.cpp_wrapper", True), ("inductor.trace.enabled", True),
               ("dynamo.inline_inbuilt_nn_modules", False), ("inductor.max_autotune_gemm_backends", "ATEN,TRITON,CPP"),
               ("inductor.triton.descriptive_names", "original_aten"), ("inductor.is_predispatch", True),
               ("inductor.some_optional_knob", None)]


@pytest.mark.parametrize("name, value", NOT_DATA_ENV)
def test_environment_settings_that_are_not_data_are_refused_naming_why(name, value):
    problem = env_problem(name, value)
    assert problem and problem.startswith("refused") and "docs/variants-and-settings.md" in problem
    with pytest.raises(InvalidOverride) as refused:
        Overrides.build(None, {name: value})
    assert refused.value.field == f"env.{name}"


@pytest.mark.parametrize("name, value", NOT_DATA_CONFIG)
def test_config_settings_that_are_not_data_are_refused(name, value):
    assert config_problem(name, value), (name, value)
    with pytest.raises(InvalidOverride) as refused:
        Overrides.from_cli([f"{name}={'null' if value is None else value}"], [])
    assert refused.value.field == f"config.{name}"


@pytest.mark.parametrize("name, value", DATA_ENV)
def test_environment_settings_that_are_data_pass(name, value):
    assert env_problem(name, value) is None
    assert Overrides.build(None, {name: value}).env == {name: value}


@pytest.mark.parametrize("name, value", DATA_CONFIG)
def test_config_settings_that_are_data_pass(name, value):
    assert config_problem(name, value) is None
    assert Overrides.build({name: value}).config == {name: value}


def test_every_flag_of_this_torch_is_data_but_those_that_reach_another_machine():
    """The rule refuses no true/false knob of the installed torch except remote caches: the
    allow-list is not a blanket refusal of useful settings (false positives would show here)."""
    from runner.engine.overrides import config_catalog

    catalog = config_catalog()
    flags = [f"{section}.{key}" for section, keys in catalog["sections"].items() for key, entry in keys.items()
             if entry["type"] == "bool" and not key.startswith("_")]
    refused = [key for key in flags if config_problem(key, True)]
    assert len(flags) > 300 and refused and all(service_word(key) for key in refused), refused
    # and each string enumeration the policy admits is one of this torch's (no stale names)
    from contract.settings_policy import CONFIG_WORDS

    known = {f"{section}.{key}" for section, keys in catalog["sections"].items() for key in keys}
    assert set(CONFIG_WORDS) <= known, set(CONFIG_WORDS) - known


def test_an_operators_allowance_admits_a_name_or_one_value_of_it():
    allow = Allowance.parse("TRITON_PTXAS_PATH=/opt/cuda-12.8/bin/ptxas, inductor.cpp.march\ninductor.cpp.cxx=null")
    assert Overrides.build(None, {"TRITON_PTXAS_PATH": "/opt/cuda-12.8/bin/ptxas"}, allow=allow)
    with pytest.raises(InvalidOverride, match="env.TRITON_PTXAS_PATH: refused"):  # pinned: another value is not admitted
        Overrides.build(None, {"TRITON_PTXAS_PATH": "/tmp/evil.sh"}, allow=allow)
    assert Overrides.build({"inductor.cpp.march": "native", "inductor.cpp.cxx": None}, allow=allow)
    with pytest.raises(InvalidOverride, match="config.inductor.cuda.cuda_cxx"):
        Overrides.build({"inductor.cuda.cuda_cxx": "nvcc"}, allow=allow)
    # The form is checked whatever is admitted: the runner's own cache directories stay its own.
    everything = Allowance.parse("TORCHINDUCTOR_CACHE_DIR")
    with pytest.raises(InvalidOverride, match="set by the runner"):
        Overrides.build(None, {"TORCHINDUCTOR_CACHE_DIR": "/tmp/x"}, allow=everything)
    assert settings_refused({"inductor.cpp.cxx": "x"}, {"TRITON_HOME": "/"}, DATA_ONLY) == [
        {"field": "config.inductor.cpp.cxx", "message": config_problem("inductor.cpp.cxx", "x")},
        {"field": "env.TRITON_HOME", "message": env_problem("TRITON_HOME", "/")}]


@pytest.mark.parametrize("text", ["bad/x", "TRITON-PTXAS", "=1", "lower_env=1"])
def test_a_malformed_allowance_is_refused_naming_the_entry(text):
    with pytest.raises(ValueError, match="PTBENCH_ALLOW_SETTINGS"):
        Allowance.parse(text)


def test_records_keep_what_was_run_and_new_overrides_are_data_only():
    stored = {"config": {"inductor.cpp.cxx": None}, "env": {"TRITON_PTXAS_PATH": "/opt/ptxas"}}
    assert Overrides.recorded(stored).as_document() == stored
    assert Overrides.build(stored["config"], stored["env"], allow=RECORDED).as_document() == stored
    with pytest.raises(InvalidOverride):
        Overrides.from_document({"overrides": stored})
    assert not Allowance() and Allowance.parse("TRITON_HOME") and RECORDED


@pytest.mark.parametrize("kind, name, value", [
    ("env", "TORCHINDUCTOR_COMPILE_THREADS", "100000"), ("config", "inductor.compile_threads", 100000),
    ("config", "inductor.max_fusion_size", 1e18), ("env", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_SEARCH_SPACE_X", "1e18"),
    ("config", "inductor.max_fusion_size", -1e10),
])
def test_numbers_out_of_their_documented_range_are_refused(kind, name, value):
    """Issue #46 item 6: numbers are data within bounds; a count of threads within 0..512."""
    problem = (env_problem if kind == "env" else config_problem)(name, value)
    assert problem and "refused" in problem
    assert settings_refused({name: value} if kind == "config" else {}, {name: value} if kind == "env" else {})
    assert Allowance.parse(name).admits(name, value)  # an operator may admit more on a machine class



def test_numbers_within_range_are_data():
    assert config_problem("inductor.compile_threads", 32) is None and env_problem("TORCHINDUCTOR_COMPILE_THREADS", "8") is None
    assert config_problem("inductor.max_fusion_size", 64) is None and env_problem("TORCHINDUCTOR_CACHE_SIZE", "1e9") is None
    assert config_problem("dynamo.cache_size_limit", 8.5) is None
