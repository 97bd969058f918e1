"""Writes of the regressions app: detection over a run, triage, re-measurement decisions."""
from dashboard.regressions.services.detection import DetectionOutcome, detection_run
from dashboard.regressions.services.remeasure import remeasurement_decide
from dashboard.regressions.services.triage import regression_triage

__all__ = ["DetectionOutcome", "detection_run", "regression_triage", "remeasurement_decide"]
