"""The metric registry (contract.metrics, issue #34): one description of each metric that the run
document's bounds, findings' formatting and detection's directions are read from. Pure: no database."""
from __future__ import annotations

import pytest

from contract.document import METRIC_NAMES
from contract.findings import BLOCK_TIMED_METRICS, format_value
from contract.explain import finding_metric
from contract.metrics import BOUNDS, BY_NAME, COMPILE_TIMES, METRICS, SHOWN, SUMMARIZED, TRACKED, chart_lines, phase_of
from contract.phases import PHASE_NAMES
from contract.values import METRIC_BOUNDS, metric_problem
from detection.types import DIRECTIONS


def test_every_metric_of_the_run_document_is_in_the_registry_with_a_bound():
    assert sorted(m.name for m in METRICS if m.bound is not None) == sorted(METRIC_NAMES)
    assert METRIC_BOUNDS == BOUNDS and set(BOUNDS) == set(METRIC_NAMES)
    assert len(BY_NAME) == len(METRICS)  # no name twice


@pytest.mark.parametrize("name", ["compile_time_warm_s", "speedup", "graph_break_count", "compiled_peak_memory_bytes"])
def test_the_documents_bounds_are_the_registrys(name):
    bound = BY_NAME[name].bound
    assert metric_problem(name, bound) is None
    assert "past this metric's bound" in metric_problem(name, bound * 1.5)


def test_directions_are_detections_words_and_counts_are_not_noisy():
    assert {m.direction for m in METRICS} <= set(DIRECTIONS)
    assert [m.name for m in METRICS if m.higher_is_better] == ["speedup", "memory_compression"]
    assert all(m.noisy for m in TRACKED)  # detection's change points are for noisy metrics only
    assert {m.name for m in METRICS if not m.noisy and m.shown} == {"graph_break_count", "recompile_count"}
    assert BY_NAME["speedup"].worse(-0.01) and not BY_NAME["speedup"].worse(0.01)
    assert BY_NAME["compile_time_warm_s"].worse(0.01) and not BY_NAME["compile_time_warm_s"].worse(None)


def test_the_pages_groups_come_from_the_registry_in_order():
    assert [m.name for m in SHOWN] == ["speedup", "compiled_latency_ms", "compile_time_cold_s", "compile_time_warm_s",
                                       "compile_cpu_ratio", "compiled_peak_memory_bytes", "memory_compression",
                                       "graph_break_count", "recompile_count"]
    assert [m.name for m in TRACKED] == ["speedup", "compiled_latency_ms", "compile_time_cold_s", "compile_time_warm_s",
                                         "compile_cpu_ratio", "compiled_peak_memory_bytes", "compile_phase_dynamo_s",
                                         "compile_phase_guards_s", "compile_phase_aot_autograd_s", "compile_phase_lowering_s",
                                         "compile_phase_codegen_s", "compile_phase_kernel_compile_s",
                                         "compile_phase_first_run_s", *(f"compile_phase_warm_{p}_s" for p in PHASE_NAMES)]
    # the cold and warm compiles' phases live in Result.compile_phases (docs/explain.md), watched as compile time is
    assert all(m.source.startswith("compile_phases.cold.phases.") and m.host_work and m.noise_default == 0.15
               and m.floor == 0.15 for m in TRACKED[6:13]) and not any(m.source for m in TRACKED[:6])
    assert [m.source for m in TRACKED[13:]] == [f"compile_phases.warm.phases.{p}" for p in PHASE_NAMES]
    assert all(m.host_work and m.noise_default == 0.15 and m.floor == 0.15 and m.label.startswith("compile warm: ")
               for m in TRACKED[13:])
    assert [phase_of(m.name) for m in (TRACKED[6], TRACKED[-1], TRACKED[0])] == [("cold", "dynamo"), ("warm", "first_run"), None]
    assert [finding_metric(m) for m in ("compile_phase_lowering_s", "compile_phase_warm_lowering_s")] == [
        "compile_time_cold_s", "compile_time_warm_s"]
    assert [(m.name, m.summary.how) for m in SUMMARIZED] == [
        ("speedup", "geomean"), ("compile_time_cold_s", "mean"), ("compile_time_warm_s", "mean"),
        ("memory_compression", "geomean"), ("graph_break_count", "total"), ("recompile_count", "total")]
    assert [m.line_label for m in COMPILE_TIMES] == ["cold", "warm"]
    assert [m.line_label for m in chart_lines("latency")] == ["compiled", "eager"]
    assert BLOCK_TIMED_METRICS == ("speedup", "compiled_latency_ms")


def test_findings_write_each_metric_in_its_registry_unit():
    assert format_value(7.5, "compile_time_warm_s") == "7.5 s"
    assert format_value(2.0, "eager_latency_ms") == "2 ms"
    assert format_value(1.25, "compile_cpu_ratio") == "1.25×"
    assert format_value(1.25, "dynamic_gap") == "1.25×"
    assert format_value(2.5e9, "eager_peak_memory_bytes") == "2.5 GB"
    assert format_value(3, "graph_break_count") == "3"
    assert format_value(3.0, "compression_ratio") == "3"  # names no metric: no unit


def test_a_phase_explains_its_total_and_alarms_nothing():
    """Issue #42: a metric's role is declared: a compile phase explains its compile's total (a property,
    not a name check) and only the metrics that explain nothing raise findings and verdicts."""
    from contract.metrics import ALARMING, EXPLAINED_BY

    assert [m.name for m in ALARMING] == ["speedup", "compiled_latency_ms", "compile_time_cold_s", "compile_time_warm_s",
                                          "compile_cpu_ratio", "compiled_peak_memory_bytes"]
    assert EXPLAINED_BY["compile_time_cold_s"] == tuple(m.name for m in TRACKED[6:13])
    assert EXPLAINED_BY["compile_time_warm_s"] == tuple(m.name for m in TRACKED[13:])
    assert BY_NAME["compiled_latency_ms"].shared_with == "eager_latency_ms"
    assert BY_NAME["speedup"].young_factor == 1.5 and BY_NAME["compile_cpu_ratio"].young_factor == 1.1
