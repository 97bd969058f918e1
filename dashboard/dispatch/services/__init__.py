"""Writes of the dispatch app (DESIGN §6: ``<entity>_<action>``, keyword-only, atomic)."""
from dashboard.dispatch.services.builds import build_register_local, worker_report
from dashboard.dispatch.services.cases import (
    case_failed,
    case_finished,
    case_started,
    cases_requeue_stale,
)
from dashboard.dispatch.services.planning import MatrixError, run_plan
from dashboard.dispatch.services.runs import (
    run_cases_cancel,
    run_enqueue_cases,
    run_request,
)

__all__ = [
    "MatrixError", "build_register_local", "case_failed", "case_finished", "case_started", "cases_requeue_stale",
    "run_cases_cancel", "run_enqueue_cases", "run_plan", "run_request", "worker_report",
]
