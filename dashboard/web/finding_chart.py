"""The chart of a finding's page (``/regressions/<id>/``): its series over the builds around the
change, drawn as the workload page draws trends (``charts.series_trends``), only the chart of the
finding's metric, with the last good and first bad builds marked."""
from __future__ import annotations

from contract.explain import FINDING_METRICS
from contract.metrics import phase_of
from dashboard.regressions.selectors import regression_markers
from dashboard.results.selectors.workloads import series_history
from dashboard.web import charts

WINDOW = 30  # builds shown either side of the first bad one


def chart_id(metric: str) -> str:
    """The workload page's chart a finding's metric is drawn on: a status or the gap on the speedup's
    (a failed build is a cross there), a compile phase on its compile's phase chart."""
    metric = FINDING_METRICS.get(metric, metric)
    phase = phase_of(metric)
    if phase is not None:
        return f"series-phases-{phase[0]}"
    return next((f"series-{chart}" for chart, _, _, lines in charts.SERIES_CHARTS if any(m == metric for _, m, _ in lines)),
                "series-speedup")


def finding_chart(*, regression, url_compare: str) -> dict | None:
    """The chart data (``static/web/charts.js``, kind "series") or None where the series has no point
    of the first bad build (a variant build is not a point of its base's trends)."""
    history = series_history(series=regression.series)
    index = {p.build_id: i for i, p in enumerate(history.points)}
    if regression.first_bad_build_id not in index:
        return None
    bad = index[regression.first_bad_build_id]
    shown = history.points[max(0, bad - WINDOW):bad + WINDOW + 1]
    trends = charts.series_trends(points=shown, markers=regression_markers(series_ids=[regression.series_id]),
                                  machine_class=regression.series.machine_class)
    wanted = chart_id(regression.metric)
    trends["charts"] = [c for c in trends["charts"] if c["id"] == wanted] or trends["charts"][:1]
    if not trends["charts"]:
        return None
    trends["empty"], trends["spreads"] = [], []
    at = {p.build_id: i for i, p in enumerate(shown)}
    trends["change"] = {"bad": at[regression.first_bad_build_id], "good": at.get(regression.last_good_build_id)}
    trends["compare_url"] = url_compare
    return trends
