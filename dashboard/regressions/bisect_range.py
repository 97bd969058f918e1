"""Reads for bisection (issue #31, docs/bisect.md): which builds a bisection may run, and what a
bisection run measured.

A build can be run by a machine class when a worker of the class reported it or someone registered
it there (``dispatch.BuildEnvironment``); a variant made on the dashboard runs on its base's
interpreter, so a known base makes its variants known. The range between two builds is every such
build of the same kind (plain builds between plain ends; variants between variants, e.g. a chain
of them) ordered as trends order builds (``ordered_at``, then id: variants of one base share their
base's time and keep the order they were made in).
"""
from __future__ import annotations

from dashboard.dispatch.models import BuildEnvironment
from dashboard.regressions.history import TRACKED_METRICS
from dashboard.results.models import Build, Result, Series
from dashboard.results.variants import base_of

# Deterministic findings a bisection follows: equal or not, no noise (Result fields).
EXACT_METRICS = {"status": "status", "graph_breaks": "graph_break_count", "recompiles": "recompile_count"}


def bisectable_metric(metric: str) -> bool:
    return metric in TRACKED_METRICS or metric in EXACT_METRICS


def known_to_class(*, build: Build, machine_class: str) -> bool:
    """Whether a worker of ``machine_class`` can run ``build`` (its own interpreter or its base's)."""
    candidates = [build.id] + ([base.id] if build.overrides and (base := base_of(build)) is not None else [])
    if (overlay := (build.environment or {}).get("overlay") or {}).get("base_build"):  # an overlay: made on its base's host
        candidates.append(overlay["base_build"])
    return BuildEnvironment.objects.filter(machine_class=machine_class, build_id__in=candidates).exists()


def _order(build: Build) -> tuple:
    return (build.ordered_at, build.id)


def builds_between(*, good: Build, bad: Build, machine_class: str) -> list[Build]:
    """The range a bisection searches: ``good``, the builds the class knows strictly between, ``bad``."""
    low, high = _order(good), _order(bad)
    plain = not good.overrides and not bad.overrides
    rows = Build.objects.filter(ordered_at__gte=good.ordered_at, ordered_at__lte=bad.ordered_at).exclude(pk__in=[good.id, bad.id])
    rows = rows.filter(overrides={}) if plain else rows.exclude(overrides={})
    inside = sorted((b for b in rows if low < _order(b) < high), key=_order)
    return [good, *(b for b in inside if known_to_class(build=b, machine_class=machine_class)), bad]


def series_case(*, series: Series) -> dict:
    """How the series' case was last requested: the size and backend of its newest result's
    run (a run stored from a document without a matrix: inductor)."""
    row = (Result.objects.filter(series=series).order_by("-id").values_list("run__size", "run__matrix").first())
    size, matrix = row if row else ("full", {})
    return {"size": size or "full", "backend": (matrix or {}).get("backend") or "inductor"}


def run_value(*, run_id, series: Series, metric: str) -> float | None:
    """The metric of the series' case in one bisection run; None when the run left no usable value (a
    lost worker, a case that failed or timed out for a noisy metric)."""
    result = Result.objects.filter(run_id=run_id, workload_id=series.workload_id, config_id=series.config_id).first()
    if result is None:
        return None
    if metric == "status":
        return 0.0 if result.status == Result.Status.PASS else 1.0 + sorted(Result.Status.values).index(result.status)
    if metric in EXACT_METRICS:
        value = getattr(result, EXACT_METRICS[metric])
        return None if value is None else float(value)
    if result.status != Result.Status.PASS:
        return None
    value = getattr(result, metric, None)
    return float(value) if value is not None and value > 0 else None
