"""bench/compile_paths.py --matrix: a row per workload and a column per compile mode over several
run documents, static cases only, each cell with its card (bench/results/compile-paths-gpu-2026-11-27)."""
from __future__ import annotations

from bench.compile_paths import matrix
from tests.documents import make_result


def _case(workload: str, mode: str, speedup: float, *, regime: str = "static", status: str = "pass") -> dict:
    result = make_result(workload, regime, speedup=speedup)
    result["config"]["compile_mode"] = mode
    result["metrics"]["compile_time_cold_s"] = 12.4
    result["status"] = status
    return result


def test_a_row_per_workload_a_column_per_mode_each_cell_with_its_card():
    h100 = {"machine": {"machine_class": "gpu-h100"}, "results": [
        _case("hf:BertForMaskedLM", "default", 0.54), _case("mlp_loop", "default", 1.03),
        _case("mlp_loop", "aot_inductor", 0.0, status="crash")]}
    h200 = {"machine": {"machine_class": "gpu-h200"}, "results": [
        _case("mlp_loop", "freezing", 6.985), _case("mlp_loop", "export", 1.07, regime="unbacked")]}
    lines = matrix([h100, h200]).splitlines()
    assert lines[0] == "workload | default | aot_inductor | freezing"
    # the core suite's names first, then the families'; an unbacked case is no static cell
    assert lines[2] == "mlp_loop | 1.030x, 12 s (h100) | crash (h100) | 6.985x, 12 s (h200)"
    assert lines[3] == "hf:BertForMaskedLM | 0.540x, 12 s (h100) | - | -"
