"""The one writer of ``Run.status`` (and of a new run's row outside ingest): the API (a requested,
posted or cancelled run) and dispatch (a run started, finished or requested) call it.

The summary tables read a run's status only as open (pending, running) or not
(``BuildSummary.in_progress``), so they are refreshed here when that changes, and when a run is
created; what the results change is refreshed by ``services.run_ingest``.
"""
from __future__ import annotations

from dashboard.results.models import Run
from dashboard.results.summaries import OPEN_RUN_STATUSES, build_summary_refresh


def run_status_set(*, run: Run, status: str, **fields) -> None:
    """Set ``run``'s status and the other columns in ``fields`` (``started_at``, ``finished_at``,
    ``notes``...) in one save, in the caller's transaction; the build's summary rows follow when the
    run opens or closes."""
    was_open = run.status in OPEN_RUN_STATUSES
    run.status = status
    for name, value in fields.items():
        setattr(run, name, value)
    run.save(update_fields=["status", *fields])
    if was_open != (status in OPEN_RUN_STATUSES):
        build_summary_refresh(build_id=run.build_id, machine_class=run.machine.machine_class)


def run_create(**fields) -> Run:
    """Create a run row (a requested run, not yet measured) and its build's summary rows."""
    run = Run.objects.create(**fields)
    build_summary_refresh(build_id=run.build_id, machine_class=run.machine.machine_class)
    return run
