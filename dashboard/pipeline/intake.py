"""Nightly intake on the dashboard's side (issue #41, docs/builds.md): ask a machine class's workers to
take in the newest build from their own package index (Celery beat, ``pipeline.intake_request``; the
message carries the intake's id and the builds that must not be pruned, nothing executable), then
store the answer (``pipeline.intake_done``): the build recorded where it lives and the class's nightly
run requested on it, once per build; or the failure with its log, shown on ``/`` and alerted."""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract.document import InvalidDocument
from contract.messages import INTAKE
from contract.queues import machine_class_problem
from dashboard.dispatch.models import BuildEnvironment, Intake
from dashboard.dispatch.services import MatrixError, run_request
from dashboard.dispatch.services.builds import build_environment_record
from dashboard.durable import send_after_commit
from dashboard.regressions.models import Bisection, Regression
from dashboard.results.models import Build, Run

log = logging.getLogger("ptbench.intake")
RUN_OPTIONS = ("size", "suite", "workloads", "modes", "regimes", "dtypes", "timeout_s", "dims", "backend")
OPEN = (Regression.Status.UNTRIAGED, Regression.Status.ACKNOWLEDGED, Regression.Status.INVESTIGATING)
REQUESTED_BY = "intake"


class IntakeError(ValueError):
    """A request or an answer that cannot be taken; ``field`` names what."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def protected_refs() -> list[str]:
    """The git shas of builds an open finding or a running bisection refers to: no worker prunes them."""
    ids = set()
    for good, bad in Regression.objects.filter(status__in=OPEN).values_list("last_good_build_id", "first_bad_build_id"):
        ids.update(i for i in (good, bad) if i)
    for builds in Bisection.objects.filter(status=Bisection.Status.RUNNING).values_list("builds", flat=True):
        ids.update(i for i in builds or () if isinstance(i, int))
    return sorted(set(Build.objects.filter(id__in=ids).values_list("git_sha", flat=True)))


def intake_request(*, machine_class: str, run_options: dict | None = None, requested_by: str = "schedule") -> Intake:
    """An intake asked of a worker of ``machine_class`` once this commits (without a broker, taken in
    by this process after the commit, as the quick start's worker)."""
    if problem := machine_class_problem(machine_class):
        raise IntakeError("machine_class", problem)
    options = {k: v for k, v in (run_options or {}).items() if v not in (None, "", [])}
    if unknown := sorted(set(options) - set(RUN_OPTIONS)):
        raise IntakeError("run_options", f"unknown: {', '.join(unknown)} (known: {', '.join(RUN_OPTIONS)})")
    with transaction.atomic():
        intake = Intake.objects.create(machine_class=machine_class, requested_by=requested_by[:32], requested_at=timezone.now(),
                                       run_options=options)
        kwargs = {"intake_id": intake.id, "protect": protected_refs()}
        if settings.CELERY_TASK_ALWAYS_EAGER:
            transaction.on_commit(lambda: _inprocess(intake.id, kwargs["protect"]))
        else:
            from kombu import Queue  # noqa: PLC0415

            from dashboard.celery import app  # noqa: PLC0415

            send_after_commit(lambda: app.send_task(INTAKE, kwargs=kwargs, queue=Queue(machine_class)),
                              what=f"intake {intake.id} of {machine_class}")
    return intake


def _inprocess(intake_id: int, protect: list[str]) -> None:
    import socket  # noqa: PLC0415

    from dashboard.dispatch.inprocess import intake_inprocess  # noqa: PLC0415 (no broker: this process takes it in)

    intake = Intake.objects.get(pk=intake_id)
    intake_done(intake_id=intake_id, hostname=socket.gethostname(), worker="in-process", machine_class=intake.machine_class,
                answer=intake_inprocess(protect=protect))


def _text(answer: dict, name: str, limit: int) -> str:
    value = answer.get(name, "")
    if not isinstance(value, str):
        raise IntakeError(f"answer.{name}", "not a string")
    return value[-limit:] if name == "log" else value[:limit]


def intake_done(*, intake_id: int, hostname: str, worker: str, machine_class: str, answer: dict) -> Intake | None:
    """A worker's answer to an intake. Once per intake (a copy of the message changes nothing); a
    malformed answer is stored as the intake's failure, naming the field. None for an intake not stored."""
    with transaction.atomic():
        intake = Intake.objects.select_for_update().filter(pk=intake_id).first()
        if intake is None:  # deleted in the admin meanwhile: nothing to store
            log.warning("an answer for intake %s, which is not stored", intake_id)
            return None
        if intake.state != Intake.State.SENT:
            return intake
        intake.hostname, intake.worker, intake.finished_at = str(hostname)[:255], str(worker)[:255], timezone.now()
        try:
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                raise IntakeError("answer.ok", "missing or not true/false")
            intake.version, intake.log = _text(answer, "version", 100), _text(answer, "log", 20000)
            intake.seconds = answer.get("seconds") if isinstance(answer.get("seconds"), int | float) else None
            if answer["ok"]:
                _taken(intake, answer, machine_class=machine_class)
            else:
                intake.state, intake.error = Intake.State.FAILED, _text(answer, "error", 4000) or "failed (no reason given)"
        except (IntakeError, InvalidDocument) as exc:
            intake.state, intake.error = Intake.State.FAILED, f"the worker's answer is malformed: {exc}"[:4000]
        intake.save()
        if intake.state == Intake.State.FAILED:
            log.error("intake %s of %s failed: %s", intake.id, intake.machine_class, intake.error)
            from dashboard.alerts.services import delivery_plan_intake  # noqa: PLC0415

            delivery_plan_intake(intake_id=intake.id)
    return intake


def _taken(intake: Intake, answer: dict, *, machine_class: str) -> None:
    python = _text(answer, "python", 1000)
    if not python:
        raise IntakeError("answer.python", "missing")
    with transaction.atomic():  # a savepoint: a malformed environment leaves nothing half-stored
        row = build_environment_record(environment=answer.get("environment"), python=python, machine_class=intake.machine_class,
                                       hostname=intake.hostname, worker=intake.worker, source=BuildEnvironment.Source.WORKER,
                                       catalog=answer.get("config_catalog"))
    pruned = [p for p in answer.get("pruned") or [] if isinstance(p, dict) and isinstance(p.get("python"), str)]
    BuildEnvironment.objects.filter(machine_class=intake.machine_class, hostname=intake.hostname,
                                    python__in=[p["python"] for p in pruned]).delete()
    intake.state, intake.build, intake.python = Intake.State.TAKEN, row.build, python
    intake.cached, intake.pruned = bool(answer.get("cached")), pruned[:100]
    intake.run = _nightly(intake)


def _nightly(intake: Intake) -> Run | None:
    """The class's nightly run on the build taken in: requested once per build and class."""
    earlier = Intake.objects.filter(machine_class=intake.machine_class, build=intake.build, run__isnull=False).exclude(pk=intake.pk)
    if (first := earlier.order_by("requested_at").first()) is not None:
        return first.run
    options = dict(intake.run_options)
    try:
        with transaction.atomic():
            return run_request(build=intake.build, machine_class=intake.machine_class, size=options.pop("size", "full"),
                               requested_by=REQUESTED_BY, reason=Run.Reason.NIGHTLY, **options)
    except MatrixError as exc:
        intake.error = f"taken in, but its nightly run was not requested: {exc.field}: {exc.message}"[:4000]
        return None
