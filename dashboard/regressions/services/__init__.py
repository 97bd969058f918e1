"""Writes of the regressions app: detection over a run, triage, re-measurement decisions, /compare/'s
stored noise bands and home's judged cells."""
from dashboard.regressions.services.detection import DetectionOutcome
from dashboard.regressions.services.detection_pass import detection_run
from dashboard.regressions.services.home_cells import home_cells_refresh
from dashboard.regressions.services.noise_bands import noise_bands_refresh
from dashboard.regressions.services.remeasure import remeasurement_decide
from dashboard.regressions.services.triage import regression_triage

__all__ = ["DetectionOutcome", "detection_run", "home_cells_refresh", "noise_bands_refresh", "regression_triage", "remeasurement_decide"]
