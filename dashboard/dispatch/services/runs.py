"""Requested runs: plan the cases, queue them on the machine class, finish or cancel the run."""
from __future__ import annotations

import shlex
import uuid

from django.conf import settings

from contract.variants import Overrides
from django.db import transaction
from django.utils import timezone

from dashboard.dispatch import broker
from dashboard.dispatch.models import CaseTask, Intake
from dashboard.dispatch.services.planning import MatrixError, matrix_resolve, run_plan
from dashboard.durable import send_after_commit
from dashboard.dispatch.signals import run_finished
from dashboard.results.models import Build, Machine, Run
from dashboard.results.run_status import run_create, run_status_set
from dashboard.results.selectors.common import build_ref
from dashboard.results.variants import overrides_stored
from contract.queues import machine_class_problem

# A requested run has no host of its own: its cases run on whichever workers of the class take
# them (each result records its worker). Runs submitted as documents name their host.
POOL_HOST = "(unassigned)"


def run_request(*, build: Build, machine_class: str, size: str, requested_by: str, suite: str | None = None, workloads=None, modes=None,
                regimes=None, dtypes=None, timeout_s: float | None = None, hostname: str = "", notes: str = "",
                dispatch: bool = True, cases_expected: int | None = None, backend: str = "inductor",
                idempotency_key: str = "", reason: str = "requested", dims=None) -> Run:
    """A pending run of ``build`` on ``machine_class``: one queued case per planned case, sent to
    the class's queue once the transaction commits. Raises ``MatrixError`` naming the bad field.

    ``dispatch=False`` plans nothing: an outside runner will submit the run's document itself.
    """
    if problem := machine_class_problem(machine_class):
        raise MatrixError("machine_class", problem)
    planned = None
    overrides = overrides_stored(build)  # a variant's cases apply its overrides
    if dispatch:
        matrix = matrix_resolve(size=size, suite=suite, machine_class=machine_class, workloads=workloads, modes=modes,
                                regimes=regimes, dtypes=dtypes, timeout_s=timeout_s,
                                default_timeout_s=settings.DISPATCH_CASE_TIMEOUT_S, backend=backend, dims=dims)
        planned = run_plan(size=size, matrix=matrix)
    with transaction.atomic():
        machine, _ = Machine.objects.get_or_create(hostname=hostname or POOL_HOST, machine_class=machine_class)
        run = run_create(
            build=build, machine=machine, size=size, status=Run.Status.PENDING, requested_by=requested_by, notes=notes,
            idempotency_key=idempotency_key, reason=reason,
            command=_request_command(build=build, machine_class=machine_class, size=size, matrix=matrix) if planned else "",
            cases_expected=len(planned.plan.cases) if planned else cases_expected,
            matrix={**matrix.as_dict(), "skipped": planned.plan.skipped} if planned else {},
        )
        if planned:
            CaseTask.objects.bulk_create(
                CaseTask(
                    run=run, workload=case.workload_name, spec=_spec_dict(case.spec, overrides),
                    workload_description=planned.descriptions[case.workload_name],
                    repro=variant_repro(case.repro, overrides),
                    timeout_s=matrix.timeout_s, config_key=case.spec.case_config.key,
                )
                for case in planned.plan.cases
            )
            # Redis down: the run is stored all the same and the stale-case sweep sends its cases.
            send_after_commit(lambda: run_enqueue_cases(run_id=run.id), what=f"the cases of run {run.id}")
    return run


def _request_command(*, build: Build, machine_class: str, size: str, matrix) -> str:
    """The ``manage.py request_run`` line that asks for the same run again."""
    argv = ["python", "manage.py", "request_run", "--build", build_ref(build), "--size", size, "--machine-class", machine_class,
            "--modes", ",".join(matrix.modes), "--regimes", ",".join(matrix.regimes), "--timeout", f"{matrix.timeout_s:g}"]
    for flag, values in (("--workloads", matrix.workloads), ("--dtypes", matrix.dtypes), ("--dims", matrix.dims)):
        if values:
            argv += [flag, ",".join(values)]
    if matrix.backend != "inductor":
        argv += ["--backend", matrix.backend]
    return shlex.join(argv)


def _spec_dict(spec, overrides: Overrides) -> dict:
    """The runner's ``CaseSpec`` as a message carries it; a variant's with its ``config_overrides`` and ``env_overrides``."""
    fields = {"workload": spec.workload, **spec.case_config.as_document(), "backend": spec.backend, "size": spec.size}
    return {**fields, "config_overrides": dict(overrides.config), "env_overrides": dict(overrides.env)} if overrides else fields


def variant_repro(repro: str, overrides: Overrides) -> str:
    """A case's repro command with the variant's ``--config``/``--env`` arguments appended."""
    return f"{repro} {shlex.join(overrides.cli_arguments())}" if overrides and repro else repro


def _intake_version(build, machine_class: str) -> str:
    return (Intake.objects.filter(build=build, machine_class=machine_class, state=Intake.State.TAKEN)
            .order_by("-requested_at").values_list("version", flat=True).first() or "")


def case_message(case: CaseTask) -> dict:
    run, build = case.run, case.run.build
    return {
        "case_id": case.id,
        "run_id": str(run.id),
        "build": {"git_sha": build.git_sha, "local_label": build.local_label, "torch_version": build.torch_version,
                  "label": build.label, **({"overrides": build.overrides} if build.overrides else {}),
                  # an overlay build (issue #41): the worker makes it from the base it names
                  **({"overlay": build.environment["overlay"]} if (build.environment or {}).get("overlay") else {}),
                  # a source build (issue #41): made by the worker's own PTBENCH_SOURCE_BUILD command
                  **({"source_build": build.environment["source_build"]} if (build.environment or {}).get("source_build") else {}),
                  # a build a worker of the class took in (issue #41): another worker takes it in from its own index
                  **({"intake": {"version": version}} if (version := _intake_version(build, run.machine.machine_class)) else {})},
        "size": run.size,
        "spec": case.spec,
        "workload": case.workload_description,
        "timeout_s": case.timeout_s,
        "warm": True,
        "repro": case.repro,
        "requested_by": run.requested_by,
    }


def case_enqueue(*, case: CaseTask) -> None:
    """Send one case to its class's queue and note it (the caller holds the row's lock)."""
    limit = case.timeout_s * 2 + settings.DISPATCH_TASK_MARGIN_S  # cold + warm phases, probe, hand-over
    case.task_id = broker.case_send(
        machine_class=case.run.machine.machine_class, kwargs=case_message(case), soft_time_limit=limit,
        time_limit=limit + 60,
    )
    case.sends += 1
    case.queued_at = timezone.now()
    case.save(update_fields=["task_id", "sends", "queued_at"])


def run_enqueue_cases(*, run_id: uuid.UUID) -> int:
    """Send the run's queued cases that were never sent (idempotent); returns how many were sent."""
    sent = 0
    with transaction.atomic():
        cases = (CaseTask.objects.select_for_update(of=("self",)).select_related("run__build", "run__machine")
                 .filter(run_id=run_id, state=CaseTask.State.QUEUED, sends=0))
        for case in cases:
            case_enqueue(case=case)
            sent += 1
    return sent


def run_cases_cancel(*, run: Run) -> int:
    """Cancel the open cases of a run being cancelled (the caller's transaction): queued ones are
    taken off the queue in Redis, running ones are stopped by their workers within seconds (the Redis flag)."""
    open_cases = CaseTask.objects.select_for_update().filter(run=run, state__in=CaseTask.OPEN_STATES)
    task_ids = [t for t in open_cases.values_list("task_id", flat=True) if t]
    count = open_cases.update(state=CaseTask.State.CANCELLED, finished_at=timezone.now())
    run_id = str(run.id)
    send_after_commit(lambda: broker.run_cancelled_flag_set(run_id=run_id), what=f"the cancel flag of run {run_id}")
    machine_class = run.machine.machine_class
    # Its queued messages are taken off the queue (they never run), and a worker holding one drops it.
    send_after_commit(lambda: broker.queued_cases_remove(machine_class=machine_class, task_ids=task_ids),
                      what=f"the queued cases of run {run_id}")
    send_after_commit(lambda: broker.tasks_revoke(task_ids=task_ids), what=f"revokes of run {run_id}")
    return count


def run_cancel_open(*, run: Run, cancelled_by: str) -> bool:
    """Cancel ``run`` if it is pending or running (the caller's transaction): its open cases cancelled,
    its status cancelled with who did it in its notes. Returns whether it was open."""
    run = Run.objects.select_for_update(of=("self",)).select_related("machine").get(pk=run.pk)
    if run.status not in (Run.Status.PENDING, Run.Status.RUNNING):
        return False
    run_cases_cancel(run=run)  # queued cases dropped, running ones stopped by their workers
    run_status_set(run=run, status=Run.Status.CANCELLED, finished_at=timezone.now(),
                   notes=(run.notes + "\n" if run.notes else "") + f"cancelled by {cancelled_by}")
    return True


def run_finish_if_done(*, run: Run) -> bool:
    """Close a dispatched run once every case is done, failed or cancelled (the caller holds the
    run's lock). Completed when every case left a result, failed when some could not; then
    ``run_finished`` is sent (the pipeline detects the whole run once)."""
    if run.status not in (Run.Status.PENDING, Run.Status.RUNNING):
        return False
    states = set(CaseTask.objects.filter(run=run).values_list("state", flat=True).distinct())
    if not states or states & set(CaseTask.OPEN_STATES):
        return False
    run_status_set(run=run, status=Run.Status.FAILED if CaseTask.State.FAILED in states else Run.Status.COMPLETED,
                   finished_at=timezone.now())
    run_finished.send(sender=Run, run=run)  # the pipeline detects it after the commit
    return True
