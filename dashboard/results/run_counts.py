"""A run's stored results counted (``Run.result_count``, ``pass_count``, ``graph_break_total``): the home
page's recent runs read them instead of counting each run's results per request (issue #46 item 13).

The ingest service adds each document's new results inside its transaction (``run_counts_add``: an
UPDATE of the run's row, so two documents of one run ingested at once add up); a run not counted yet
(null: stored before migration results/0025) is counted whole instead. ``bench/dashboard_load.py`` counts
after bulk loading, migration results/0025 for older data; ``results.selectors.runs.run_list_recent`` counts
on request what is still null.
"""
from __future__ import annotations

from types import SimpleNamespace

from django.db.models import Count, F, Q, Sum

PASS = "pass"  # Result.Status.PASS (migrations pass models without the enum)


def _models():
    from dashboard.results import models  # noqa: PLC0415 (the app's models: migrations pass their historical ones)

    return models


def run_counts_of(result_rows) -> dict:
    """Per run id, {"n", "passed", "breaks"} of a Result queryset (one GROUP BY)."""
    rows = (result_rows.order_by().values("run_id")
            .annotate(n=Count("id"), passed=Count("id", filter=Q(status=PASS)), breaks=Sum("graph_break_count")))
    return {row["run_id"]: row for row in rows}


def run_counts_recount(*, run_ids=None, models: SimpleNamespace | None = None) -> None:
    """Count the results of the runs ``run_ids`` (every run where None) and store the counts."""
    m = models or _models()
    runs = m.Run.objects.all() if run_ids is None else m.Run.objects.filter(pk__in=run_ids)
    results = m.Result.objects.all() if run_ids is None else m.Result.objects.filter(run_id__in=run_ids)
    counts = run_counts_of(results)
    changed = []
    for run in runs.only("id"):
        row = counts.get(run.id, {})
        run.result_count, run.pass_count, run.graph_break_total = row.get("n", 0), row.get("passed", 0), row.get("breaks") or 0
        changed.append(run)
    m.Run.objects.bulk_update(changed, ["result_count", "pass_count", "graph_break_total"], batch_size=1000)


def run_counts_add(*, run, new_results) -> None:
    """Add a document's new results (``Result`` objects just stored) to its run's counts (a new run
    starts at 0); a run not counted yet is counted whole (its results stored before included)."""
    m = _models()
    added = m.Run.objects.filter(pk=run.pk, result_count__isnull=False).update(
        result_count=F("result_count") + len(new_results),
        pass_count=F("pass_count") + sum(1 for r in new_results if r.status == PASS),
        graph_break_total=F("graph_break_total") + sum(r.graph_break_count or 0 for r in new_results))
    if not added:
        run_counts_recount(run_ids=[run.pk])
