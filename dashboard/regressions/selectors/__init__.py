"""Reads of the regressions app: findings and the board, the verdict, runs detection has yet to see
(``regressions``), bisections (``bisect``) and commit ranges (``commits``)."""
from dashboard.regressions.selectors.regressions import (  # noqa: F401 (the package's face)
    Marker, Verdict, build_verdict, detection_failed_message, detection_failures, detection_failures_recent,
    finding_metric_names, open_regression_counts, regression_as_dict, regression_list,
    regression_markers, remeasurement_as_suspect, remeasurement_list_pending, run_detection_pending,
    runs_detection_pending, runs_detection_running, OPEN_STATUSES, VARIANT_REASONS,
)
