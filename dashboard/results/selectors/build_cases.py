"""A build's cases on a machine class (the case stored last of each series), read once for the home
page's suite table, training table and last night's failures, which each read them before (three
reads of 1,920 rows per class at 1,000,000 results)."""
from __future__ import annotations

from dashboard.results.aggregates import latest_per_series
from dashboard.results.models import Result

# What the three read of a case.
CASE_COLUMNS = ("id", "series_id", "config_id", "workload__name", "workload__phase", "status", "speedup", "run_id",
                "compile_time_cold_s", "eager_peak_memory_bytes", "compiled_peak_memory_bytes")


def build_cases(*, build_id: int, machine_class: str) -> dict[int, dict]:
    """Per series, the build's case on the class stored last, with ``CASE_COLUMNS``."""
    rows = (Result.objects.filter(build_id=build_id, series__machine_class=machine_class).order_by("id")
            .values_list(*CASE_COLUMNS))
    return latest_per_series(dict(zip(CASE_COLUMNS, row)) for row in rows)


def cases_of_configs(cases: dict[int, dict], config_ids: list[int] | None) -> dict[int, dict]:
    """The cases of some configurations (all where ``config_ids`` is None), in their order: a series
    has one configuration, so this is the read filtered by them."""
    if config_ids is None:
        return cases
    wanted = set(config_ids)
    return {series_id: case for series_id, case in cases.items() if case["config_id"] in wanted}
