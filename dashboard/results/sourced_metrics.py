"""Metrics a result keeps inside a JSON field rather than a column of its own (contract.metrics
``Metric.source``: the cold compile's phases, docs/explain.md), as query annotations named like the
metric, so detection, the verdict and the noise model read them as they read a column."""
from __future__ import annotations

from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from contract.metrics import SOURCED


def with_sourced_metrics(rows):
    """``rows`` (a Result queryset) with each sourced metric annotated under its name (None where absent)."""
    return rows.annotate(**{name: Cast(KT(path.replace(".", "__")), FloatField()) for name, path in SOURCED.items()})
