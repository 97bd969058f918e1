"""Writes of the dispatch app (docs/architecture.md, conventions: ``<entity>_<action>``, keyword-only, atomic)."""
from dashboard.dispatch.services.builds import (
    BaseNotProbed,
    build_probe_classes,
    build_probe_request,
    build_register_local,
    variant_overrides_validate,
    worker_report,
)
from dashboard.dispatch.services.cases import (
    case_failed,
    case_finished,
    case_started,
    cases_requeue_stale,
)
from dashboard.dispatch.services.planning import MatrixError, run_plan
from dashboard.dispatch.services.runs import (
    run_cancel_open,
    run_cases_cancel,
    run_enqueue_cases,
    run_request,
)

__all__ = [
    "BaseNotProbed", "MatrixError", "build_probe_classes", "build_probe_request", "build_register_local", "case_failed", "case_finished", "case_started", "cases_requeue_stale",
    "run_cancel_open", "run_cases_cancel", "run_enqueue_cases", "run_plan", "run_request", "variant_overrides_validate", "worker_report",
]
