from __future__ import annotations

import math

from drf_spectacular.utils import extend_schema

from contract.findings import ratio_interval
from dashboard.api import selectors
from dashboard.api.exceptions import FieldError
from dashboard.api.serializers import (
    PointSerializer,
    SeriesPointsPageSerializer,
    SeriesPointsQuerySerializer,
    SeriesSerializer,
)
from dashboard.api.filters import SeriesFilter
from dashboard.api.views.common import READ_ERRORS, ApiListView, ApiView, paged, query
from dashboard.results.models import Series
from dashboard.regressions.noise import series_noise_get
from dashboard.results.selectors.common import METRICS_BY_NAME, range_since
from dashboard.results.selectors.workloads import series_history



class SeriesListView(ApiListView):
    filterset_class = SeriesFilter
    serializer_class = SeriesSerializer

    def get_queryset(self):
        return selectors.series_list()

    @extend_schema(operation_id="series_list", filters=True, summary="List series (workload x config x machine class)",
                   responses={200: paged(SeriesSerializer), **READ_ERRORS}, tags=["series"])
    def get(self, request):
        return self.list(request)


class SeriesPointsView(ApiView):
    @extend_schema(operation_id="series_points", summary="One metric of a series over builds: the data behind a trend chart",
                   description="One point per build, oldest first (a build measured twice: the result stored last). "
                   "`noise`: the run-to-run noise of this series and metric (`sd`, relative; `source`: series, class or "
                   "default; null for an untracked metric), the noise detection and the verdict use. `low`/`high`: "
                   "where another run of the same build falls 95% of the time (value x exp(+-1.96 sqrt(2) sd)), "
                   "widened to the run's own band (speedup: its own noise; latency: the median's interval).",
                   parameters=[SeriesPointsQuerySerializer], responses={200: SeriesPointsPageSerializer, **READ_ERRORS},
                   tags=["series"])
    def get(self, request, signature: str):
        options = query(request, SeriesPointsQuerySerializer)
        try:
            series = selectors.series_get(signature=signature)
        except Series.DoesNotExist:
            raise FieldError("signature", f"no series {signature[:60]!r}", 404) from None
        metric = METRICS_BY_NAME[options["metric"]]
        points = series_history(series=series).points
        if points:
            since = range_since(newest=points[-1].at, range_key=options["range"])
            points = [p for p in points if since is None or p.at >= since]
        noise = _noise(series, metric.name)
        rows = [_point(p, metric.name, noise) for p in points]
        return self.page(request, rows, PointSerializer, series=SeriesSerializer(series).data, metric={
            "name": metric.name, "label": metric.label, "unit": metric.unit, "higher_is_better": metric.higher_is_better},
            noise=noise.to_dict() if noise else None)


def _noise(series, metric: str):
    return series_noise_get(series=series, metric=metric)


def _point(point, metric: str, noise=None) -> dict:
    value = point.values.get(metric)
    low = high = None
    if metric == "speedup" and value is not None and point.speedup_noise is not None:
        low, high = ratio_interval(value, point.speedup_noise)  # the chart's band: never below 0
    elif metric in point.bands:
        low, high = point.bands[metric]
    if noise is not None and value is not None:
        half = math.exp(1.96 * math.sqrt(2.0) * noise.sd)
        low, high = min(low if low is not None else value, value / half), max(high if high is not None else value, value * half)
    return {"build": point.ref, "at": point.at, "run": point.run_id, "result": point.result_id, "status": point.status,
            "value": value, "low": low, "high": high}
