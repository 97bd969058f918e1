"""Reads of the dispatch app."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.results.models import Build, Run
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.runs import run_progress


def build_for_schedule(*, ref: str, machine_class: str) -> Build:
    """``latest``: the build a worker of the class reported most recently; else a build ref."""
    if ref != "latest":
        return build_resolve(ref=ref)
    # Not a variant a worker also declares: a scheduled variant names its overrides itself.
    row = (BuildEnvironment.objects.filter(machine_class=machine_class, build__overrides={}).select_related("build")
           .order_by("-reported_at").first())
    if row is None:
        raise LookupError(f"no worker of machine class {machine_class!r} has reported a build yet")
    return row.build


@dataclass(frozen=True)
class CaseProgress:
    total: int
    by_state: dict[str, int]
    workers: list[str]

    def count(self, state: str) -> int:
        return self.by_state.get(state, 0)

    @property
    def pending(self) -> int:
        return self.count(CaseTask.State.QUEUED)

    @property
    def running(self) -> int:
        return self.count(CaseTask.State.RUNNING)


def run_case_progress(*, run: Run) -> CaseProgress | None:
    """Where a dispatched run's cases are (None for a run that arrived as a document)."""
    by_state = dict(CaseTask.objects.filter(run=run).values_list("state").annotate(n=Count("id")).order_by("state"))
    if not by_state:
        return None
    workers = sorted(set(CaseTask.objects.filter(run=run).exclude(worker="").values_list("worker", flat=True)))
    return CaseProgress(total=sum(by_state.values()), by_state=by_state, workers=workers)


def run_case_tasks(*, run: Run, states: tuple[str, ...] | None = None) -> list[CaseTask]:
    rows = CaseTask.objects.filter(run=run).select_related("result")
    return list(rows.filter(state__in=states) if states else rows)


def run_request_summary(*, run: Run, build: Build) -> str:
    """What ``request_run`` says once the request returns: "queued" while workers have the cases,
    the outcome when they already ran (Celery eager: the quick start measures in-process)."""
    run.refresh_from_db(fields=["status"])
    where = run.machine.machine_class
    if run.status in (Run.Status.PENDING, Run.Status.RUNNING):
        return f"{run.cases_expected} cases of {build} queued on {where}"
    progress = run_progress(run=run)
    outcome = ", ".join(f"{status} {n}" for status, n in sorted(progress.by_status.items())) or "no results"
    return f"{progress.stored}/{run.cases_expected} cases of {build} measured on {where} ({run.status}): {outcome}"
