"""Every dashboard reader of metrics takes them from the registry (contract.metrics, issue #34): the
columns it names exist, and no reader keeps a list of its own."""
from __future__ import annotations

from contract.metrics import BY_NAME, METRICS, SHOWN, SUMMARIZED, TRACKED
from dashboard.alerts.models import ALERT_METRICS
from dashboard.regressions.ab import AB_METRICS
from dashboard.regressions.history import TRACKED_METRICS
from dashboard.results.aggregates import FIGURES, OVERVIEW_FIGURES
from dashboard.results.host import HOST_WORK_METRICS
from dashboard.results.models import ConfigSummary, Result
from dashboard.results.selectors.common import METRICS_BY_NAME
from dashboard.web.charts import SERIES_CHARTS


def test_each_metric_the_pages_track_or_summarize_is_a_nullable_column():
    for m in {*SHOWN, *TRACKED, *SUMMARIZED}:
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
    assert HOST_WORK_METRICS == {"compile_time_cold_s", "compile_time_warm_s"}
    charted = [metric for _, _, _, lines in SERIES_CHARTS for _, metric, _ in lines]
    assert sorted(charted) == sorted(m.name for m in METRICS if m.chart)
