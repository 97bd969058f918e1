"""Reads of bisections (docs/bisect.md): what the regression's page and the API show, and the
bisections the sweep moves on."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from dashboard.regressions.models import Bisection, BisectionRun
from dashboard.results.models import Build, Run
from dashboard.results.selectors.common import build_ref

OPEN = (Run.Status.PENDING, Run.Status.RUNNING)


def bisections_stalled(*, before: dt.datetime) -> list[int]:
    """Running bisections with no open run whose last run ended before ``before`` (or that have none):
    the message that should have moved them on was lost."""
    open_runs = BisectionRun.objects.filter(bisection=OuterRef("pk"), run__status__in=OPEN)
    recent = BisectionRun.objects.filter(bisection=OuterRef("pk"), run__finished_at__gte=before)
    return list(Bisection.objects.filter(status=Bisection.Status.RUNNING, created_at__lt=before)
                .exclude(Exists(open_runs)).exclude(Exists(recent)).values_list("id", flat=True))


@dataclass
class BuildRow:
    index: int
    build: Build
    ref: str
    role: str = ""  # good end, bad end, good, bad, first bad, last good, measuring
    values: list[float] = field(default_factory=list)
    open_runs: int = 0
    override: str = ""

    @property
    def values_text(self) -> str:
        return " · ".join(f"{v:.4g}" for v in self.values)


@dataclass
class BisectionView:
    bisection: Bisection
    rows: list[BuildRow]
    runs: int
    open_runs: int
    lost: int

    @property
    def remaining(self) -> int:
        return self.bisection.high - self.bisection.low - 1


def bisection_view(*, bisection: Bisection) -> BisectionView:
    """The range, each build's role and values so far, and the runs (done, open, lost)."""
    from dashboard.regressions.bisect_range import run_value  # noqa: PLC0415

    builds = Build.objects.in_bulk(bisection.builds)
    attempts = list(bisection.runs.select_related("run"))
    rows = [BuildRow(index=i, build=builds[b], ref=build_ref(builds[b])) for i, b in enumerate(bisection.builds)]
    lost = 0
    for attempt in attempts:
        row = rows[attempt.index]
        if attempt.run.status in OPEN:
            row.open_runs += 1
            continue
        value = run_value(run_id=attempt.run_id, series=bisection.series, metric=bisection.metric)
        if value is None:
            lost += 1
        else:
            row.values.append(value)
    decided = {step["index"]: step["decision"] for step in bisection.steps}
    subjects = _commit_subjects(bisection)
    for row in rows:
        if bisection.kind == Bisection.Kind.COMMITS and row.index:  # each build's commit (issue #41): sha and subject
            sha = bisection.result["shas"][row.index]
            row.override = f"{sha[:12]} {subjects.get(sha, '')}".rstrip()
        if bisection.kind == Bisection.Kind.OVERRIDES and row.index:
            section, key, value = bisection.overrides[row.index - 1]
            row.override = f"+ {section}.{key}={value}"
        if row.index == 0:
            row.role = "good end"
        elif row.index == len(rows) - 1:
            row.role = "bad end"
        else:
            row.role = decided.get(row.index, "")
        if bisection.status == Bisection.Status.DONE:
            row.role = {bisection.high: "first bad", bisection.low: "last good"}.get(row.index, row.role)
        elif row.open_runs:
            row.role = "measuring"
    return BisectionView(bisection=bisection, rows=rows, runs=len(attempts),
                         open_runs=sum(r.open_runs for r in rows), lost=lost)


def _commit_subjects(bisection: Bisection) -> dict[str, str]:
    from dashboard.regressions.models import CommitRange  # noqa: PLC0415

    if bisection.kind != Bisection.Kind.COMMITS:
        return {}
    row = CommitRange.objects.filter(pk=bisection.result.get("commit_range")).first()
    return {c["sha"]: c["subject"] for c in row.commits} if row else {}


def bisection_busy(*, bisection: Bisection) -> bool:
    """Running, or done over overrides while the search for its override's partner runs."""
    return bisection.status == Bisection.Status.RUNNING or bisection.partner_searches.filter(
        status=Bisection.Status.RUNNING).exists()


def bisection_latest(*, regression_id: int) -> Bisection | None:
    return Bisection.objects.filter(regression_id=regression_id, parent__isnull=True).select_related("series", "culprit_build").first()


def bisection_data(*, bisection: Bisection) -> dict:
    """The API's ``bisection`` object."""
    view = bisection_view(bisection=bisection)
    return {
        "id": bisection.id, "status": bisection.status, "kind": bisection.kind, "metric": bisection.metric,
        "requested_by": bisection.requested_by, "created_at": bisection.created_at, "finished_at": bisection.finished_at,
        "builds": [{"build": r.ref, "role": r.role, "values": r.values, "open_runs": r.open_runs,
                    **({"override": r.override.removeprefix("+ ")} if r.override else {})} for r in view.rows],
        "low": bisection.low, "high": bisection.high, "remaining": view.remaining, "steps": bisection.steps,
        "runs": view.runs, "open_runs": view.open_runs, "lost_runs": view.lost,
        "limits": {"attempts": bisection.attempts, "max_attempts": bisection.max_attempts,
                   "max_steps": bisection.max_steps, "max_runs": bisection.max_runs},
        "culprit_build": build_ref(bisection.culprit_build) if bisection.culprit_build else None,
        "result": {k: v for k, v in bisection.result.items() if k in
                   ("message", "last_good", "first_bad", "commits", "override", "noise", "reproduced")},
    }
