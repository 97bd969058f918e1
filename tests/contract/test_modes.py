"""The compile paths as compile modes (contract.modes, docs/compile-paths.md): the schema's enum and
the support table agree, the planner leaves out what a mode cannot run and says why, a run that
names no mode still measures the four torch.compile modes, and documents carry path phases and the
data-dependent status."""
from __future__ import annotations

from contract.catalog import resolve_entries
from contract.document import validate_document
from contract.modes import MODES, PATH_MODES, TORCH_COMPILE_MODES, skip_reason
from contract.planning import plan_cases
from contract.vocabulary import COMPILE_MODES, RESULT_STATUSES
from tests.documents import make_document, make_result


def test_the_schema_names_the_paths_beside_the_four_modes_and_the_table_covers_each():
    assert COMPILE_MODES == ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs",
                             "export", "aot_inductor", "cpp_wrapper", "freezing")
    assert tuple(MODES) == COMPILE_MODES
    assert TORCH_COMPILE_MODES == COMPILE_MODES[:4] and PATH_MODES == COMPILE_MODES[4:]
    assert MODES["reduce-overhead"].hud_name == "cudagraphs"
    assert "data_dependent_error" in RESULT_STATUSES


def test_inference_only_paths_skip_a_training_step_with_the_reason():
    assert skip_reason("export", regime="unbacked", phase="infer") is None
    assert skip_reason("cpp_wrapper", regime="static", phase="train") is None
    for mode in ("export", "aot_inductor", "freezing"):
        reason = skip_reason(mode, regime="static", phase="train")
        assert reason.startswith(f"mode {mode} runs infer only (") and reason.endswith("this workload's phase is train")


def test_the_planner_leaves_out_a_training_workload_for_export_and_says_why():
    workloads = resolve_entries(["mlp_loop", "resnet_train"])
    plan = plan_cases(workloads, modes=["default", "export", "aot_inductor", "freezing", "cpp_wrapper"], regimes=["static"],
                      dtypes=None, device="cpu", backend="inductor", size="tiny")
    planned = sorted((c.workload_name, c.spec.compile_mode) for c in plan.cases)
    assert planned == sorted([("mlp_loop", m) for m in ("default", "export", "aot_inductor", "freezing", "cpp_wrapper")]
                             + [("resnet_train", "default"), ("resnet_train", "cpp_wrapper")])
    assert plan.skipped == [
        "resnet_train: mode export runs infer only (an exported program is an inference graph); this workload's phase is train",
        "resnet_train: mode aot_inductor runs infer only (an AOTInductor package is an inference graph); this workload's phase is train",
        "resnet_train: mode freezing runs infer only (freezing folds weights as constants under no_grad); this workload's phase is train",
    ]
    [repro] = [c.repro for c in plan.cases if c.spec.compile_mode == "aot_inductor"]
    assert "--modes aot_inductor" in repro


def test_a_document_with_path_phases_and_a_data_dependent_error_is_valid():
    passed = make_result("mlp_loop", "backed", mode="aot_inductor")
    passed["path_phases"] = {"export_s": 0.4, "package_s": 18.8, "load_s": 0.002, "first_call_s": 0.001}
    failed = make_result("mlp_loop", "unbacked", mode="export", status="data_dependent_error", speedup=None)
    failed["error"] = {"type": "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
                       "message": "data-dependent guard Eq(u0, 1) at model.py:7 in forward: Could not guard on data-dependent expression"}
    assert validate_document(make_document(results=[passed, failed])) == []


def test_a_bad_path_phase_is_refused_naming_the_field():
    result = make_result("mlp_loop", "backed", mode="export")
    result["path_phases"] = {"export_s": -1.0, "compile_s": 2.0}
    errors = [str(e) for e in validate_document(make_document(results=[result]))]
    assert errors == ["results[0].path_phases: Additional properties are not allowed ('compile_s' was unexpected)",
                      "results[0].path_phases.export_s: -1.0 is less than the minimum of 0"]
