"""The compile paths (runner.engine.paths, docs/compile-paths.md) on the CPU: export in this process
with the eager backend (no inductor compile), a data-dependent export failing as its own status
with its expression and line, and one inductor case through the CLI for aot_inductor and for the
two inductor settings (C++ compiles: marked slow)."""
from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from contract.document import validate_document
from contract.spec import CaseSpec
from runner.engine import data_dependent
from runner.engine.case import run_case
from runner.engine.compile_pairs import CompilePairs, CompileReference
from runner.engine.executor import REPO_ROOT, CaseExecutor
from runner.engine.paths import export_shapes
from runner.engine.prepare import compile_kwargs
from runner.engine.result_file import ResultFile
from tests.runner import sample_workloads
from tests.runner.test_runner_case import QUICK


def export_in_process(tmp_path, workload: str, regime: str) -> dict:
    spec = CaseSpec(workload=f"tests.runner.sample_workloads:{workload}", compile_mode="export", shape_regime=regime,
                    dtype="float32", device="cpu", backend="eager", timing=QUICK)
    out = ResultFile(tmp_path / f"{regime}.json")
    run_case(spec, out)
    return out.read()


@pytest.mark.parametrize("regime, how, unbacked", [
    ("static", "static", 0),
    ("backed", "Dim.DYNAMIC", 0),
    # torch 2.11-2.13 have no Dim.UNBACKED and non-strict export ignores mark_unbacked (probed):
    # the mark goes through strict export; a newer build says which of its ways it used.
    ("unbacked", None, 1),
])
def test_export_times_its_phases_and_counts_unbacked_symbols(tmp_path, regime, how, unbacked):
    record = export_in_process(tmp_path, "TinyMLP", regime)
    assert record["status"] == "pass", record["error"]
    phases, metrics, path = record["path_phases"], record["metrics"], record["environment"]["compile_path"]
    assert set(phases) == {"export_s", "first_call_s"} and phases["export_s"] > 0 and phases["first_call_s"] > 0
    assert metrics["compile_time_cold_s"] == pytest.approx(phases["export_s"] + phases["first_call_s"])
    assert path["path"] == "export" and path["unbacked_symbols"] == unbacked and path["torch"]
    if how:
        assert path["dynamic_shapes"] == how and path["strict"] is False
    else:
        assert path["dynamic_shapes"] in ("Dim.UNBACKED", "mark_unbacked (non-strict export)",
                                          "mark_unbacked (strict export: non-strict ignores the mark in this build)")
    assert path["guards"] is None or path["guards"] > 0
    assert metrics["speedup"] > 0 and metrics["accuracy_max_abs_error"] < 1e-5
    assert metrics["compiled_peak_memory_bytes"] > 0
    if regime == "static":  # a static export takes only its example shapes: no second shape
        assert metrics["recompile_count"] is None and "not run" in record["environment"]["second_shape"]
    else:  # a dynamic export takes the second shape without recompiling
        assert metrics["recompile_count"] == 0 and metrics["graph_break_count"] == 0


def test_a_data_dependent_export_is_its_own_status_with_the_expression_and_line(tmp_path):
    record = export_in_process(tmp_path, "DataDependentBranch", "static")
    lines, first = inspect.getsourcelines(sample_workloads.branch_and_item)
    line = first + next(i for i, text in enumerate(lines) if "if y.sum() > 0" in text)
    assert record["status"] == "data_dependent_error"
    detail = record["environment"]["data_dependent"]
    assert detail["expression"] == "Eq(u0, 1)"
    assert detail["source"] == f"tests/runner/sample_workloads.py:{line} in branch_and_item"
    assert detail["code"].startswith("if y.sum() > 0:")
    assert record["error"]["type"].endswith("GuardOnDataDependentSymNode")
    assert record["error"]["message"].startswith(
        f"data-dependent guard Eq(u0, 1) at tests/runner/sample_workloads.py:{line} in branch_and_item: Could not guard")


def test_an_exporting_path_skips_compile_pairs_and_says_why(tmp_path):
    """A pair counts from the first call; an export's work is before it. Were the pair run, this
    reference (which cannot start) would leave its error in environment.compile_pairs."""
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    spec = CaseSpec(workload="tests.runner.sample_workloads:TinyMLP", compile_mode="export", shape_regime="backed",
                    dtype="float32", device="cpu", backend="eager", import_allowed=True, timing=QUICK)
    executor = CaseExecutor(python=sys.executable, timeout_s=300, warm=False,
                            compile_pairs=CompilePairs(reference=CompileReference(python=str(broken)), pairs=1))
    result = executor.run(spec, workload_name="test_tiny_mlp", repro="")
    assert result["status"] == "pass", result["error"]
    assert result["environment"]["compile_pairs_skipped"] == "mode export exports before its first call"
    assert "compile_pairs" not in result["environment"] and result["metrics"]["compile_cpu_ratio"] is None
    assert result["path_phases"]["export_s"] > 0


def test_unbacked_export_takes_the_first_way_the_build_offers(monkeypatch):
    dims = sample_workloads.TinyMLP.dynamic_dims
    # A build with Dim.UNBACKED (newer shape specs): non-strict, the hint on each dynamic dim.
    monkeypatch.setattr(export_shapes.compat, "export_dim_hint", lambda name: f"<Dim.{name}>")
    newer = export_shapes.export_shapes("unbacked", dims, ("x",))
    assert (newer.how, newer.strict, newer.dynamic_shapes) == ("Dim.UNBACKED", False, ({0: "<Dim.UNBACKED>"},))
    assert export_shapes.export_shapes("backed", dims, ("x",)).dynamic_shapes == ({0: "<Dim.DYNAMIC>"},)
    # This build (2.13): no Dim.UNBACKED, and the probe finds non-strict export ignores mark_unbacked.
    monkeypatch.undo()
    assert export_shapes.compat.export_dim_hint("UNBACKED") is None
    assert export_shapes.non_strict_honours_mark_unbacked() is False
    assert export_shapes.export_shapes("unbacked", dims, ("x",)).strict is True
    assert export_shapes.export_shapes("static", dims, ("x",)) == export_shapes.ExportShapes(None, strict=False, how="static")


def test_the_data_dependent_message_is_read_where_it_says_less():
    assert data_dependent.describe("Could not guard on data-dependent expression u0 < 2 (unhinted: u0 < 2)") == {"expression": "u0 < 2"}
    assert data_dependent.describe("something else entirely") == {}


def test_the_source_line_is_read_from_the_caused_by_line_where_the_caller_is_not_named():
    # torch 2.11's export on an H100 (bench/results/compile-paths-gpu-2026-11-27/h200-export-core-unbacked.json)
    text = ("Could not guard on data-dependent expression u0 > 1 (unhinted: u0 > 1).  (Size-like symbols: u0)\n\n"
            "Caused by: is_causal = q_length > 1 and attention_mask is None and is_causal  # "
            "transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward (_dynamo/variables/tensor.py:1951 in evaluate_expr)\n")
    detail = data_dependent.describe(text)
    assert detail["expression"] == "u0 > 1"
    assert detail["source"] == "transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward"
    assert detail["code"] == "is_causal = q_length > 1 and attention_mask is None and is_causal"
    assert data_dependent.headline(detail) == (
        "data-dependent guard u0 > 1 at transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward")
    assert data_dependent.headline({}) == "data-dependent guard"


def test_the_inductor_settings_of_the_paths():
    def kwargs(mode: str, device: str = "cpu", regime: str = "static"):
        return compile_kwargs(CaseSpec(workload="w", compile_mode=mode, shape_regime=regime, dtype="float32", device=device))

    assert kwargs("cpp_wrapper") == {"backend": "inductor", "options": {"cpp_wrapper": True}, "dynamic": False}
    assert kwargs("freezing", regime="backed") == {"backend": "inductor", "options": {"freezing": True}}
    assert kwargs("freezing", device="cuda")["options"] == {"freezing": True, "triton.cudagraphs": True}  # the HUD's freezing_cudagraphs
    assert kwargs("export") == kwargs("aot_inductor") == {"backend": "inductor", "dynamic": False}  # export's module: no mode
    assert kwargs("max-autotune")["mode"] == "max-autotune"


def run_cli(tmp_path, modes: str, regimes: str, *extra: str) -> list[dict]:
    out = tmp_path / f"{modes}.json"
    command = [sys.executable, "-m", "runner", "run", "--size", "tiny", "--workloads", "tests.runner.sample_workloads:TinyMLP",
               "--modes", modes, "--regimes", regimes, "--device", "cpu", "--out", str(out), *extra]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    document = json.loads(out.read_text())
    assert validate_document(document) == []
    return document["results"]


@pytest.mark.slow
def test_aot_inductor_exports_packages_loads_and_takes_a_second_shape(tmp_path):
    [result] = run_cli(tmp_path, "aot_inductor", "backed")
    assert result["status"] == "pass", result["error"]
    phases, metrics, path = result["path_phases"], result["metrics"], result["environment"]["compile_path"]
    assert set(phases) == {"export_s", "package_s", "load_s", "first_call_s"} and all(v > 0 for v in phases.values())
    assert phases["package_s"] > phases["load_s"]  # the C++ compile is the package's
    assert metrics["compile_time_cold_s"] == pytest.approx(sum(phases.values()), rel=1e-6)
    assert path["apis"] == ["torch._inductor.aoti_compile_and_package", "torch._inductor.aoti_load_package"]
    assert path["dynamic_shapes"] == "Dim.DYNAMIC" and path["package_bytes"] > 0
    assert "libstdc++.so" in path["libstdcxx_global"]  # made global before the load (runner.engine.paths.aoti)
    assert metrics["speedup"] > 0 and metrics["accuracy_max_abs_error"] < 1e-4 and metrics["recompile_count"] == 0
    # The warm phase exported and packaged again with the cold phase's inductor cache.
    assert metrics["compile_time_warm_s"] > 0 and set(result["environment"]["warm_path_phases"]) == set(phases)
    assert "--modes aot_inductor" in result["repro"]


@pytest.mark.slow
def test_cpp_wrapper_and_freezing_compile_with_their_settings(tmp_path):
    results = {r["config"]["compile_mode"]: r for r in run_cli(tmp_path, "cpp_wrapper,freezing", "static", "--no-warm")}
    for mode, options in (("cpp_wrapper", {"cpp_wrapper": True}), ("freezing", {"freezing": True})):
        result = results[mode]
        assert result["status"] == "pass", result["error"]
        assert result["environment"]["compile_path"]["inductor"] == options
        assert result["environment"]["compile_path"]["guards"] > 0
        assert "path_phases" not in result  # torch.compile: its first call is the compile
        assert result["metrics"]["compile_time_cold_s"] > 0 and result["metrics"]["speedup"] > 0
        assert result["metrics"]["recompile_count"] == 1  # static: the second shape recompiles


GLOBAL_SCOPE_PROBE = """
import ctypes, sys
import torch  # loads libstdc++ as its own dependency: local to torch, not in the global scope
from runner.engine.paths.aoti import global_libstdcxx
def is_global():
    try:
        ctypes.CDLL(None)._ZNSt6locale7classicEv  # std::locale::classic(), looked up in the global scope
        return True
    except AttributeError:
        return False
before = is_global()
path = global_libstdcxx()
print(before, is_global(), path)
"""


def test_the_process_libstdcxx_is_made_global_before_a_package_loads():
    # The GPU image's compiler links libstdc++ into an AOTInductor package; with torch's libstdc++ only
    # local, the package used its own copy and faulted in its first std::regex (SIGSEGV on load,
    # bench/results/compile-paths-gpu-2026-11-28). Made global, the package's references bind to it.
    completed = subprocess.run([sys.executable, "-c", GLOBAL_SCOPE_PROBE], cwd=REPO_ROOT, capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    before, after, path = completed.stdout.split()
    if before == "True":
        pytest.skip("this interpreter already has libstdc++ in its global scope")
    assert after == "True" and "libstdc++.so" in path
