"""What the runner workers report about each case: started, finished (its document), failed.

Every message may arrive twice (a redelivered task, a retried publish) or out of order: each is
applied under the run's lock and only moves a case forward, and results are stored through the
idempotent ingest service, so no case is stored twice.
"""
from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dashboard.dispatch.models import CaseTask
from dashboard.dispatch.services.runs import case_enqueue, run_finish_if_done
from dashboard.results.models import Result, Run
from dashboard.results.run_status import run_status_set
from dashboard.results.services import run_ingest
from contract.document import InvalidDocument


def _locked(case_id: int) -> tuple[Run, CaseTask] | None:
    """The case and its run, locked in the one order every writer uses: run, then case."""
    run_id = CaseTask.objects.filter(pk=case_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return None
    # of=("self",): the run row only. A plain FOR UPDATE over the join also locked the machine row,
    # which every run of a class shares: two workers finishing cases of two runs at once deadlocked on it.
    run = Run.objects.select_for_update(of=("self",)).select_related("machine").get(pk=run_id)
    return run, CaseTask.objects.select_for_update().get(pk=case_id)


def _lock_open(case_id: int, states=CaseTask.OPEN_STATES) -> tuple[Run, CaseTask] | str:
    """The locked run and case when the case is in ``states``; otherwise why the message is ignored."""
    locked = _locked(case_id)
    if locked is None:
        return "unknown case"
    if locked[1].state not in states:
        return f"ignored: case is {locked[1].state}"
    return locked


def _run_started(run: Run) -> None:
    if run.status == Run.Status.PENDING:
        run_status_set(run=run, status=Run.Status.RUNNING, started_at=run.started_at or timezone.now())


def case_started(*, case_id: int, worker: str, hostname: str, attempt: int = 1, redelivered: bool = False,
                 cuda_visible_devices: str | None = None, run_id: str = "") -> str:
    """A worker took the case (again, after a lost worker: ``attempts`` counts them)."""
    with transaction.atomic():
        locked = _lock_open(case_id)
        if isinstance(locked, str):
            return locked
        run, case = locked
        case.state = CaseTask.State.RUNNING
        case.attempts += 1
        case.worker, case.hostname = worker[:255], hostname[:255]
        case.started_at = timezone.now()
        case.save(update_fields=["state", "attempts", "worker", "hostname", "started_at"])
        _run_started(run)
    return "running"


def case_finished(*, case_id: int, document: dict) -> str:
    """Store the case's one-result document (through ``run_ingest``) and close the case; the run
    finishes with its last case. A document that cannot be stored fails the case (retrying the
    measurement would not fix it)."""
    with transaction.atomic():
        # Done: a duplicate; cancelled: the run was. A failed case may still get its late result.
        locked = _lock_open(case_id, (*CaseTask.OPEN_STATES, CaseTask.State.FAILED))
        if isinstance(locked, str):
            return locked
        run, case = locked
        # The run stays on its pool host; the worker that measured the case is in its environment.
        if isinstance(document.get("machine"), dict):
            document["machine"]["hostname"] = run.machine.hostname
        try:
            with transaction.atomic():
                run_ingest(document=document)  # stored only: detection waits for the run's end
        except InvalidDocument as exc:
            case.state, case.error = CaseTask.State.FAILED, f"the worker's document was refused: {exc}"[:10000]
        else:
            case.state = CaseTask.State.DONE
            case.result = (
                Result.objects.filter(run=run, workload__name=case.workload, config__key=case.config_key).first()
            )
        case.finished_at = timezone.now()
        case.save(update_fields=["state", "error", "result", "finished_at"])
        _run_started(run)
        run_finish_if_done(run=run)
    return case.state


def case_failed(*, case_id: int, reason: str, worker: str = "", hostname: str = "", attempts: int | None = None,
                run_id: str = "", cuda_visible_devices: str | None = None) -> str:
    """An infrastructure error outlasted the worker's retries: the case ends without a result."""
    with transaction.atomic():
        locked = _lock_open(case_id)
        if isinstance(locked, str):
            return locked
        run, case = locked
        case.state, case.error, case.finished_at = CaseTask.State.FAILED, reason[:10000], timezone.now()
        case.worker, case.hostname = (worker or case.worker)[:255], (hostname or case.hostname)[:255]
        case.save(update_fields=["state", "error", "finished_at", "worker", "hostname"])
        run_finish_if_done(run=run)
    return case.state


def stale_after(case: CaseTask) -> dt.timedelta:
    """How long a started case may go unheard of: past its worker's hard time limit and past the
    broker's hand-over of a lost worker's task (the visibility timeout), with a margin."""
    hard_limit = case.timeout_s * 2 + settings.DISPATCH_TASK_MARGIN_S + 60
    visibility = settings.PTBENCH_VISIBILITY_TIMEOUT  # the GPU workers' one, not the dashboard's
    return dt.timedelta(seconds=max(hard_limit, visibility) + 600)


def cases_requeue_stale(*, now: dt.datetime | None = None, unsent_after: dt.timedelta = dt.timedelta(minutes=5)) -> dict:
    """The sweep (a beat task): send again a case that was never sent (the broker was down at
    request time) or whose worker went silent past ``stale_after``; after ``DISPATCH_MAX_SENDS``
    sends, fail it so that its run can finish."""
    now = now or timezone.now()
    counts = {"sent": 0, "requeued": 0, "failed": 0}
    candidates = list(
        CaseTask.objects.filter(state=CaseTask.State.QUEUED, sends=0, run__ingested_at__lt=now - unsent_after)
        .values_list("id", flat=True)
    ) + list(CaseTask.objects.filter(state=CaseTask.State.RUNNING).values_list("id", flat=True))
    for case_id in candidates:
        with transaction.atomic():
            locked = _locked(case_id)
            if locked is None:
                continue
            run, case = locked
            case.run = run
            if case.state == CaseTask.State.QUEUED and case.sends == 0:
                case_enqueue(case=case)
                counts["sent"] += 1
            elif case.state == CaseTask.State.RUNNING and case.started_at and now - case.started_at > stale_after(case):
                if case.sends < settings.DISPATCH_MAX_SENDS:
                    case.state = CaseTask.State.QUEUED
                    case.save(update_fields=["state"])
                    case_enqueue(case=case)
                    counts["requeued"] += 1
                else:
                    case.state, case.finished_at = CaseTask.State.FAILED, now
                    case.error = f"no word from worker {case.worker or '?'} since {case.started_at:%Y-%m-%d %H:%M:%S} UTC after {case.sends} sends"
                    case.save(update_fields=["state", "finished_at", "error"])
                    run_finish_if_done(run=run)
                    counts["failed"] += 1
    return counts
