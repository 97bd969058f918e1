"""The overview's training rows: one build on one machine class, its training cases per suite, as
the HUD's training view reads them (pass rate, geomean speedup, compile time, memory), with what was
compiled: the model's forward and backward (``@train``, a core workload that stops before the
optimizer) or the whole step with its optimizer (``@train_step``, ``transformer_train_step``)
(docs/llms.md, "Whole training steps")."""
from __future__ import annotations

from dataclasses import dataclass

from contract.suites import suite_names, suite_of
from dashboard.results.aggregates import PASS, geomean, latest_per_series, mean
from dashboard.results.models import Result
from dashboard.results.selectors.build_cases import cases_of_configs

WHOLE_STEP = "whole step"  # forward, loss, backward and the optimizer's step in one compile
MODEL_ONLY = "model"  # forward and backward; the optimizer outside (or absent)
WHOLE_STEP_MARKS = ("@train_step", "train_step")  # a family's option; the core suite's transformer_train_step


@dataclass
class TrainingRow:
    suite: str
    compiled: str  # WHOLE_STEP or MODEL_ONLY
    cases: int
    passed: int
    speedup_geomean: float | None
    compile_s_mean: float | None  # cold compile, mean over passing cases
    compiled_peak_bytes_mean: float | None  # the compiled side's peak memory, mean over passing cases
    memory_ratio_geomean: float | None  # eager peak / compiled peak (the HUD's compression ratio), geomean


def compiled_part(workload: str) -> str:
    return WHOLE_STEP if workload.endswith(WHOLE_STEP_MARKS) or "@train_step+" in workload else MODEL_ONLY


def training_table(*, build_id: int, machine_class: str, config_ids: list[int] | None = None,
                   cases: dict[int, dict] | None = None) -> list[TrainingRow]:
    """Per suite (in ``suite_names`` order), then per compiled part, the build's training cases on
    the class (the case stored last of each series; distributed steps included); ``cases``: the
    build's cases as ``build_cases`` read them, where the page has them."""
    if cases is not None:
        cases = {s: c for s, c in cases_of_configs(cases, config_ids).items() if c["workload__phase"] == "train"}
    else:
        rows = Result.objects.filter(build_id=build_id, series__machine_class=machine_class, workload__phase="train")
        if config_ids is not None:
            rows = rows.filter(config_id__in=config_ids)
        cases = latest_per_series(rows.order_by("id").values(
            "series_id", "workload__name", "status", "speedup", "compile_time_cold_s", "eager_peak_memory_bytes",
            "compiled_peak_memory_bytes"))
    grouped: dict[tuple[str, str], list[dict]] = {}
    for case in cases.values():
        grouped.setdefault((suite_of(case["workload__name"]), compiled_part(case["workload__name"])), []).append(case)
    order = {suite: index for index, suite in enumerate(suite_names())}
    return [_row(suite, part, grouped[(suite, part)])
            for suite, part in sorted(grouped, key=lambda key: (order.get(key[0], len(order)), key[1] != MODEL_ONLY))]


def _row(suite: str, compiled: str, cases: list[dict]) -> TrainingRow:
    passing = [c for c in cases if c["status"] == PASS]
    ratios = [c["eager_peak_memory_bytes"] / c["compiled_peak_memory_bytes"] for c in passing
              if c["eager_peak_memory_bytes"] and c["compiled_peak_memory_bytes"]]
    return TrainingRow(suite=suite, compiled=compiled, cases=len(cases), passed=len(passing),
                       speedup_geomean=geomean(c["speedup"] for c in passing),
                       compile_s_mean=mean(c["compile_time_cold_s"] for c in passing),
                       compiled_peak_bytes_mean=mean(c["compiled_peak_memory_bytes"] for c in passing),
                       memory_ratio_geomean=geomean(ratios))
