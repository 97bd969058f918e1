"""Reads of the API (docs/architecture.md, conventions), over the results app's models and selectors; each list is a
queryset ordered for stable pages."""
from __future__ import annotations

import uuid

from django.db.models import Count, Func, IntegerField, Prefetch, QuerySet
from django.db.models.fields.json import KeyTransform

from dashboard.results.models import Build, BuildSummary, Result, Run, Series
from dashboard.results.selectors.runs import RunProgress


def build_list() -> QuerySet[Build]:
    """Builds, newest first (``build_ordered_at``); filtered by ``filters.BuildFilter``."""
    return Build.objects.defer("environment").prefetch_related(
        Prefetch("summaries", queryset=BuildSummary.objects.only("build_id", "machine_class"))).order_by("-ordered_at", "-id")


def run_list() -> QuerySet[Run]:
    """Runs, newest first (``run_newest``); filtered by ``filters.RunFilter``."""
    return Run.objects.select_related("build", "machine").order_by("-ingested_at", "id")


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


KERNEL_PROFILE_TOP = 3  # rows of each side in a result's kernel profile summary


class JSONArrayLength(Func):
    """The length of a JSON array (null for null), on PostgreSQL and SQLite."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        return super().as_sqlite(compiler, connection, function="json_array_length", **extra)


def _kernel_profile_annotations() -> dict:
    """The kernel profile's summary read in the query (a profile is up to 200 kernels with sources:
    a page of results would read megabytes): device, profiled_s, the kernel count, each side's top rows."""
    fields = {"kp_device": KeyTransform("device", "kernel_profile"), "kp_profiled_s": KeyTransform("profiled_s", "kernel_profile"),
              "kp_kernels": JSONArrayLength(KeyTransform("kernels", "kernel_profile"))}
    for side in ("compiled", "eager"):
        fields |= {f"kp_{side}_{n}": KeyTransform(str(n), KeyTransform(side, "kernel_profile")) for n in range(KERNEL_PROFILE_TOP)}
    return fields


def kernel_profile_summary(result: Result) -> dict | None:
    """A result's kernel profile in short, from ``result_list``'s / ``result_get``'s annotations;
    None where it has no profile."""
    rows = {side: [row for n in range(KERNEL_PROFILE_TOP) if isinstance(row := getattr(result, f"kp_{side}_{n}"), dict)]
            for side in ("compiled", "eager")}
    if result.kp_device is None and result.kp_kernels is None and not rows["compiled"] and not rows["eager"]:
        return None
    return {"device": result.kp_device, "profiled_s": result.kp_profiled_s, "kernels": result.kp_kernels,
            "compiled_top": rows["compiled"], "eager_top": rows["eager"]}


def result_list() -> QuerySet[Result]:
    """Results in the order they were stored (a build filter uses ``result_build_series``); filtered
    by ``filters.ResultFilter``. The kernel profile only as its summary."""
    return (Result.objects.select_related("build", "workload", "config", "series").defer("samples", "environment", "kernel_profile")
            .annotate(**_kernel_profile_annotations()).order_by("id"))


def result_get(*, result_id: int) -> Result:
    return Result.objects.select_related("build", "workload", "config", "series").annotate(**_kernel_profile_annotations()).get(pk=result_id)


def series_list() -> QuerySet[Series]:
    """Series by workload, machine class and config; filtered by ``filters.SeriesFilter``."""
    return Series.objects.select_related("workload", "config").order_by("workload__name", "machine_class", "config_id")


def series_get(*, signature: str) -> Series:
    return Series.objects.select_related("workload", "config").get(signature=signature)


def account_names(*, names) -> set[str]:
    """Those of ``names`` that are user names of dashboard accounts (staff), not CI systems."""
    from django.contrib.auth import get_user_model  # noqa: PLC0415

    wanted = {n for n in names if n}
    return set(get_user_model().objects.filter(username__in=wanted).values_list("username", flat=True)) if wanted else set()
