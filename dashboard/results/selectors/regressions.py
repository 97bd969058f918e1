"""The pages' only two reads of detected regressions (the ``dashboard.regressions`` app).

Both answer empty while that app is not installed, and import its model lazily, so the pages work
before and after it lands. Open = not yet triaged away: untriaged, acknowledged, investigating.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Count

OPEN_STATUSES = ("untriaged", "acknowledged", "investigating")
APP = "dashboard.regressions"


@dataclass(frozen=True)
class Marker:
    series_id: int
    metric: str
    build_id: int  # the first bad build
    kind: str  # "regression" or "improvement"
    status: str
    magnitude: float | None


def _model():
    if not apps.is_installed(APP):
        return None
    from dashboard.regressions.models import Regression  # noqa: PLC0415 (the app may not exist)

    return Regression


def open_regression_counts(*, machine_class: str, build_id: int | None = None) -> dict[int, int]:
    """Open regressions (kind 'regression') of a machine class's series, per config id; with
    ``build_id``, only those first seen on that build (the overview: the latest build's)."""
    model = _model()
    if model is None:
        return {}
    found = model.objects.filter(series__machine_class=machine_class, status__in=OPEN_STATUSES, kind="regression")
    if build_id is not None:
        found = found.filter(first_bad_build_id=build_id)
    rows = (
        found
        .values("series__config_id")
        .annotate(n=Count("id"))
    )
    return {r["series__config_id"]: r["n"] for r in rows}


def regression_markers(*, series_ids: list[int]) -> list[Marker]:
    """Every detected change on these series (any status): drawn on the trend charts at its first
    bad build, on the chart of its metric."""
    model = _model()
    if model is None or not series_ids:
        return []
    rows = model.objects.filter(series_id__in=series_ids).values_list(
        "series_id", "metric", "first_bad_build_id", "kind", "status", "magnitude"
    )
    return [Marker(*row) for row in rows]
