"""Reads for the pages. Small enough for Python-side aggregation; issue #5 adds summary tables."""
from __future__ import annotations

import math
from dataclasses import dataclass

from django.db.models import Count, Q

from dashboard.results.models import Result, Run


@dataclass(frozen=True)
class RunSummary:
    run: Run
    result_count: int
    pass_count: int
    geomean_speedup: float | None
    graph_breaks: int

    @property
    def pass_rate(self) -> float | None:
        return self.pass_count / self.result_count if self.result_count else None


def geomean(values: list[float]) -> float | None:
    positive = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in positive) / len(positive)) if positive else None


def run_list_recent(*, limit: int = 20) -> list[RunSummary]:
    runs = list(
        Run.objects.select_related("build", "machine")
        .annotate(result_count=Count("results"), pass_count=Count("results", filter=Q(results__status="pass")))
        .order_by("-ingested_at")[:limit]
    )
    speedups: dict = {run.id: [] for run in runs}
    breaks: dict = {run.id: 0 for run in runs}
    for run_id, status, speedup, graph_break_count in Result.objects.filter(run__in=runs).values_list(
        "run_id", "status", "speedup", "graph_break_count"
    ):
        if status == Result.Status.PASS and speedup:
            speedups[run_id].append(speedup)
        breaks[run_id] += graph_break_count or 0
    return [
        RunSummary(
            run=run,
            result_count=run.result_count,
            pass_count=run.pass_count,
            geomean_speedup=geomean(speedups[run.id]),
            graph_breaks=breaks[run.id],
        )
        for run in runs
    ]


def run_speedup_chart(*, run: Run) -> dict:
    """Speedup per workload and shape regime for one run: the data behind the home page's chart."""
    rows = (
        Result.objects.filter(run=run)
        .select_related("workload", "config")
        .order_by("workload__name", "config__compile_mode", "config__shape_regime")
    )
    traces: dict[str, dict] = {}
    for row in rows:
        name = f"{row.config.shape_regime} ({row.config.compile_mode})"
        trace = traces.setdefault(name, {"name": name, "x": [], "y": [], "noise": [], "status": []})
        trace["x"].append(row.workload.name)
        trace["y"].append(row.speedup if row.status == Result.Status.PASS else None)
        trace["noise"].append((row.speedup or 0) * (row.speedup_noise or 0))
        trace["status"].append(row.status)
    return {"run_id": str(run.id), "traces": list(traces.values())}


def run_results(*, run: Run):
    return (
        Result.objects.filter(run=run)
        .select_related("workload", "config")
        .order_by("workload__name", "config__compile_mode", "config__shape_regime")
    )
