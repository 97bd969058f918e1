"""Celery tasks of the dispatch app: what the runner workers report (queue ``ingest``), and the
beat tasks (nightly runs, the stale-case sweep). Names come from ``contract.messages``."""
from __future__ import annotations

from celery import shared_task

from dashboard.dispatch import services
from dashboard.durable import DB_RETRY
from contract.variants import Overrides
from contract.vocabulary import SIZES
from dashboard.dispatch.selectors import build_for_schedule
from dashboard.results.variants import CatalogUnknown, variant_overrides_check
from dashboard.results.services import variant_get_or_create
from contract.messages import (
    CASE_FAILED,
    CASE_FINISHED,
    CASE_STARTED,
    DASHBOARD_QUEUE,
    WORKER_REPORT,
)


@shared_task(name=CASE_STARTED, queue=DASHBOARD_QUEUE, acks_late=True, **DB_RETRY)
def case_started(**kwargs) -> str:
    return services.case_started(**kwargs)


@shared_task(name=CASE_FINISHED, queue=DASHBOARD_QUEUE, acks_late=True, **DB_RETRY)
def case_finished(*, case_id: int, document: dict) -> str:
    return services.case_finished(case_id=case_id, document=document)


@shared_task(name=CASE_FAILED, queue=DASHBOARD_QUEUE, acks_late=True, **DB_RETRY)
def case_failed(**kwargs) -> str:
    return services.case_failed(**kwargs)


@shared_task(name=WORKER_REPORT, queue=DASHBOARD_QUEUE, acks_late=True)
def worker_report(*, hostname: str, worker: str, machine_class: str, builds: list, errors: list | None = None) -> int:
    return services.worker_report(hostname=hostname, worker=worker, machine_class=machine_class, builds=builds, errors=errors)


@shared_task(name="dispatch.requeue_stale_cases", queue=DASHBOARD_QUEUE)
def requeue_stale_cases() -> dict:
    return services.cases_requeue_stale()


@shared_task(name="dispatch.scheduled_run", queue=DASHBOARD_QUEUE)
def scheduled_run(*, build: str = "latest", machine_class: str, size: str = "full", suite: str | None = None, workloads=None,
                  modes=None, regimes=None, dtypes=None, timeout_s=None, config=None, env=None, dims=None) -> str:
    """A run requested by the schedule (django-celery-beat: a periodic task with these kwargs, edited
    in the admin). ``build`` is a build ref, or ``latest``: the build most recently reported by a
    worker of the class (a machine that installs the nightly each evening reports it on restart).
    ``config``/``env``: a nightly of that build's variant (``contract.variants``), its config keys
    checked against the base build's torch when it was probed (a bad key: no run, the task fails
    naming it); else each case checks them in the build's interpreter before anything compiles.
    ``dims``: which dynamic dims backed/unbacked mark (docs/case-config.md); ``size``: tiny or full; ``suite``: a suite whose workloads join ``workloads`` (a schedule stored
    with its size as ``suite`` is migrated by dispatch/0004; one sent before it still runs at that size)."""
    if suite in SIZES:  # a beat message sent before dispatch/0004 named the size so
        size, suite = suite, None
    base = build_for_schedule(ref=build, machine_class=machine_class)
    overrides = Overrides.build(config, env)
    try:
        variant_overrides_check(base=base, overrides=overrides)
    except CatalogUnknown:
        pass
    variant = variant_get_or_create(base=base, overrides=overrides)
    run = services.run_request(build=variant, machine_class=machine_class,
                               size=size, suite=suite, requested_by="schedule", workloads=workloads, modes=modes, regimes=regimes,
                               dtypes=dtypes, timeout_s=timeout_s, dims=dims)
    return str(run.id)
