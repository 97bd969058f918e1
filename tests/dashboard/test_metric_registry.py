"""Every dashboard reader of metrics takes them from the registry (contract.metrics, issue #34): the
columns it names exist, and no reader keeps a list of its own."""
from __future__ import annotations

import dataclasses

from contract.metrics import ADMIN, BY_NAME, DYNAMIC_SIDE, HOST_SENSITIVE, METRICS, REFERENCED, SHOWN, SUMMARIZED, TRACKED
from dashboard.results.admin import ResultAdmin, ResultInline
from dashboard.results.compile_reference import REFERENCED_METRICS, reference_changed
from dashboard.results.selectors.dynamic import Side
from dashboard.results.summaries import DYNAMIC_SIDE as STORED_SIDE
from dashboard.alerts.models import ALERT_METRICS
from dashboard.regressions.ab import AB_METRICS
from dashboard.regressions.history import TRACKED_METRICS
from dashboard.results.aggregates import FIGURES, OVERVIEW_FIGURES
from dashboard.results.host import HOST_SENSITIVE_METRICS, HOST_WORK_METRICS
from dashboard.results.models import ConfigSummary, Result
from dashboard.results.selectors.common import METRICS_BY_NAME
from dashboard.web.charts import SERIES_CHARTS


def test_each_metric_the_pages_track_or_summarize_is_a_nullable_column():
    for m in {*SHOWN, *TRACKED, *SUMMARIZED}:
        if m.source:  # kept in a JSON field, read as an annotation (dashboard/results/sourced_metrics.py)
            Result._meta.get_field(m.source.split(".")[0])
            continue
        assert Result._meta.get_field(m.name).null, m.name
    for m in SUMMARIZED:
        ConfigSummary._meta.get_field(m.summary.field)  # raises when the summary has no such field
    for m in METRICS:
        if m.bound is not None:
            Result._meta.get_field(m.name)  # every metric a document carries is stored


def test_the_readers_are_the_registrys():
    assert TRACKED_METRICS == {m.name: m.direction for m in TRACKED}
    assert ALERT_METRICS[: len(TRACKED)] == [m.name for m in TRACKED]
    assert list(METRICS_BY_NAME) == [m.name for m in SHOWN]
    assert all(METRICS_BY_NAME[m.name] is BY_NAME[m.name] for m in AB_METRICS)
    assert [c for c, _, _ in FIGURES] == [m.name for m in SUMMARIZED]
    assert [f.column for f in OVERVIEW_FIGURES[1:]] == [m.name for m in SUMMARIZED if m.summary.label]
    assert HOST_WORK_METRICS == {"compile_time_cold_s", "compile_time_warm_s", *(m.name for m in METRICS if m.source)}
    charted = [metric for _, _, _, lines in SERIES_CHARTS for _, metric, _ in lines]
    assert sorted(charted) == sorted(m.name for m in METRICS if m.chart)


def test_the_lists_once_kept_by_hand_are_the_registrys():
    """HOST_SENSITIVE_METRICS, REFERENCED_METRICS, DYNAMIC_SIDE and the admin's columns (#34 item 2):
    read from the registry, with the values they had when kept by hand."""
    assert HOST_SENSITIVE_METRICS == HOST_SENSITIVE == ("speedup", "compiled_latency_ms")
    assert REFERENCED_METRICS == REFERENCED == {"compile_cpu_ratio"}
    assert reference_changed("compile_cpu_ratio", "torch@a", "torch@b") and not reference_changed("speedup", "torch@a", "torch@b")
    assert ResultInline.fields == ["workload", "config", "status", *ADMIN]
    assert ResultAdmin.list_display == ["workload", "config", "status", *ADMIN, "run"]
    assert list(ADMIN) == ["speedup", "compile_time_cold_s", "graph_break_count", "recompile_count"]


def test_dynamic_summary_sides_keep_their_stored_order():
    """DynamicSummary.pairs stores each side as a list in DYNAMIC_SIDE's order: a metric's place
    (``dynamic_side``) is never reused or renumbered, and Side reads the lists by position."""
    assert STORED_SIDE is DYNAMIC_SIDE
    assert DYNAMIC_SIDE == ("status", "speedup", "compile_time_cold_s", "graph_break_count", "recompile_count", "speedup_noise")
    places = sorted(m.dynamic_side for m in METRICS if m.dynamic_side)
    assert places == list(range(1, len(places) + 1))
    # then an exporting path's export time (path_phases, not a metric: docs/compile-paths.md)
    assert [f.name for f in dataclasses.fields(Side)] == [*DYNAMIC_SIDE, "export_s"]
