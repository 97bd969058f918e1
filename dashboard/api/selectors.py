"""Reads of the API (DESIGN §6), over the results app's models and selectors; each list is a
queryset ordered for stable pages."""
from __future__ import annotations

import datetime as dt
import uuid

from django.db.models import Count, Prefetch, QuerySet

from dashboard.results.models import Build, BuildSummary, Result, Run, Series
from dashboard.results.selectors.runs import RunProgress


def build_list(*, machine_class: str | None = None, torch_version: str | None = None, git_sha: str | None = None,
               local_label: str | None = None, since: dt.datetime | None = None, until: dt.datetime | None = None) -> QuerySet[Build]:
    """Builds, newest first (``build_ordered_at``); ``machine_class``: measured or requested there."""
    qs = Build.objects.defer("environment").prefetch_related(
        Prefetch("summaries", queryset=BuildSummary.objects.only("build_id", "machine_class")))
    if machine_class:
        qs = qs.filter(summaries__machine_class=machine_class)
    if torch_version:
        qs = qs.filter(torch_version=torch_version)
    if git_sha:
        qs = qs.filter(git_sha__startswith=git_sha)
    if local_label is not None:
        qs = qs.filter(local_label=local_label)
    if since:
        qs = qs.filter(ordered_at__gte=since)
    if until:
        qs = qs.filter(ordered_at__lte=until)
    return qs.order_by("-ordered_at", "-id")


def run_list(*, build: Build | None = None, machine_class: str | None = None, status: str | None = None,
             suite: str | None = None) -> QuerySet[Run]:
    """Runs, newest first (``run_newest``)."""
    qs = Run.objects.select_related("build", "machine")
    if build is not None:
        qs = qs.filter(build=build)
    if machine_class:
        qs = qs.filter(machine__machine_class=machine_class)
    if status:
        qs = qs.filter(status=status)
    if suite:
        qs = qs.filter(suite=suite)
    return qs.order_by("-ingested_at", "id")


def run_get(*, run_id: uuid.UUID) -> Run:
    return Run.objects.select_related("build", "machine").get(pk=run_id)


def runs_with_progress(*, runs: list[Run]) -> list[Run]:
    """Sets ``run.progress`` on each run: one grouped count over ``result_unique_case_per_run``."""
    by_run: dict = {}
    rows = Result.objects.filter(run__in=runs).values_list("run_id", "status").annotate(n=Count("id")).order_by()
    for run_id, status, n in rows:
        by_run.setdefault(run_id, {})[status] = n
    for run in runs:
        counts = dict(sorted(by_run.get(run.id, {}).items()))
        run.progress = RunProgress(stored=sum(counts.values()), expected=run.cases_expected, by_status=counts)
    return runs


def result_list(*, build: Build | None = None, run: uuid.UUID | None = None, workload: str | None = None,
                compile_mode: str | None = None, shape_regime: str | None = None, dtype: str | None = None,
                device: str | None = None, machine_class: str | None = None, status: str | None = None,
                series: str | None = None) -> QuerySet[Result]:
    """Results in the order they were stored; ``build`` uses ``result_build_series``."""
    qs = Result.objects.select_related("build", "workload", "config", "series").defer("samples", "environment")
    if build is not None:
        qs = qs.filter(build=build)
    if run is not None:
        qs = qs.filter(run_id=run)
    if workload:
        qs = qs.filter(workload__name=workload)
    for field, value in (("compile_mode", compile_mode), ("shape_regime", shape_regime), ("dtype", dtype), ("device", device)):
        if value:
            qs = qs.filter(**{f"config__{field}": value})
    if machine_class:
        qs = qs.filter(series__machine_class=machine_class)
    if status:
        qs = qs.filter(status=status)
    if series:
        qs = qs.filter(series__signature=series)
    return qs.order_by("id")


def result_get(*, result_id: int) -> Result:
    return Result.objects.select_related("build", "workload", "config", "series").get(pk=result_id)


def series_list(*, workload: str | None = None, compile_mode: str | None = None, shape_regime: str | None = None,
                dtype: str | None = None, device: str | None = None, machine_class: str | None = None) -> QuerySet[Series]:
    qs = Series.objects.select_related("workload", "config")
    if workload:
        qs = qs.filter(workload__name=workload)
    for field, value in (("compile_mode", compile_mode), ("shape_regime", shape_regime), ("dtype", dtype), ("device", device)):
        if value:
            qs = qs.filter(**{f"config__{field}": value})
    if machine_class:
        qs = qs.filter(machine_class=machine_class)
    return qs.order_by("workload__name", "machine_class", "config_id")


def series_get(*, signature: str) -> Series:
    return Series.objects.select_related("workload", "config").get(signature=signature)


def account_names(*, names) -> set[str]:
    """Those of ``names`` that are user names of dashboard accounts (staff), not CI systems."""
    from django.contrib.auth import get_user_model  # noqa: PLC0415

    wanted = {n for n in names if n}
    return set(get_user_model().objects.filter(username__in=wanted).values_list("username", flat=True)) if wanted else set()
