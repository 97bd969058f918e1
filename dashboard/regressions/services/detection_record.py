"""A finding stored once (keyed by series, metric, finding and first bad build, with its likeliest
cause), and what a detection pass did (``DetectionOutcome``)."""
from __future__ import annotations

from dataclasses import dataclass, field


from dashboard.regressions.explain import finding_cause
from dashboard.regressions.models import Regression
from dashboard.results.same_build import same_build_ids


@dataclass
class DetectionOutcome:
    run_id: str
    series_checked: int = 0
    created: list[int] = field(default_factory=list)  # Regression ids created by this pass
    remeasurements: list[int] = field(default_factory=list)  # Remeasurement ids requested
    series_failed: list[int] = field(default_factory=list)  # Series ids whose detection raised
    # What raised, per failed series: kept on the run's AlertSummary.detection_failures, so the
    # build's verdict says ``error`` / ``detection_failed`` naming them instead of a silent pass.
    failures: list[dict] = field(default_factory=list)
    done: bool = False  # the pass went over every series of the run (``detection_pass``)
    skipped: str = ""  # "running" (another copy holds the pass) or "done" (nothing new since it finished)
    pass_started: str = ""  # the pass this step worked on: a continuation names it

    def as_dict(self) -> dict:
        return {"run_id": self.run_id, "series_checked": self.series_checked,
                "created": self.created, "remeasurements": self.remeasurements, "series_failed": self.series_failed,
                "done": self.done, **({"skipped": self.skipped} if self.skipped else {})}


def _record(*, series, metric, finding, kind, first_bad, last_good, raised, summary, outcome, **fields) -> Regression | None:
    """Store a finding (once). Never one whose last good and first bad builds are one build stored
    twice (``results.same_build``: the quick start's local build and its imported sample)."""
    if same_build_ids(first_bad, last_good):
        return None
    if kind == Regression.Kind.REGRESSION and (cause := finding_cause(series_id=series.id, metric=metric, last_good_id=last_good,
                                                                      first_bad_id=first_bad)):
        fields["details"] = {**fields.get("details", {}), "cause": cause}  # docs/explain.md
    regression, created = Regression.objects.get_or_create(
        series=series, metric=metric, finding=finding, first_bad_build_id=first_bad,
        defaults={"kind": kind, "last_good_build_id": last_good, "raised_build_id": raised, "summary": summary, **fields},
    )
    if created:
        outcome.created.append(regression.id)
    return regression


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _jsonable(details: dict) -> dict:
    return {k: v for k, v in details.items() if isinstance(v, (str, int, float, bool, list, type(None)))}
