"""Celery tasks of the pipeline. GPU workers have no database: they send the document here."""
from celery import shared_task
from django.conf import settings

from contract.document import InvalidDocument
from dashboard.alerts.services import delivery_plan_bisection
from dashboard.alerts.tasks import plan_run
from dashboard.durable import DB_RETRY, send_logged
from dashboard.pipeline.services import detection_sweep, run_ingest_and_detect
from dashboard.regressions.services import home_cells_refresh, noise_bands_refresh
from dashboard.regressions.services.detection_pass import detection_step
from dashboard.regressions.services.compare_cells import compare_cells_refresh
from dashboard.regressions.services.noise_bands import noise_bands_fill
from dashboard.results.services.latest_tables import latest_tables_refresh
from dashboard.regressions.services.bisect import bisection_advance
from dashboard.regressions.services.bisect_auto import (
    bisections_start_auto,
    commit_bisections_start_auto,
    commit_ranges_request_auto,
)
from dashboard.regressions.services.commits import commit_range_listed as commit_range_store
from contract.messages import COMMIT_RANGE_LISTED, DASHBOARD_QUEUE, INTAKE_DONE
from dashboard.pipeline.intake import intake_done as intake_store
from dashboard.pipeline.intake import intake_request as intake_send


@shared_task(name="results.ingest_run_document", queue="ingest", acks_late=True, **DB_RETRY)
def ingest_run_document(document: dict) -> dict:
    """Store a run document (idempotent) and detect it. A bad document is answered, not retried:
    retrying cannot fix it; the database unreachable is retried (``DB_RETRY``)."""
    try:
        return {"ok": True, **run_ingest_and_detect(document=document).as_dict()}
    except InvalidDocument as exc:
        return {"ok": False, "errors": [{"field": e.field, "message": e.message} for e in exc.errors]}


@shared_task(name="regressions.detect_run", queue="analysis", acks_late=True, **DB_RETRY)
def detect_run(run_id: str, pass_started: str | None = None) -> dict:
    """Detection over one ingested run, for at most DETECTION_TASK_BUDGET_S: the rest of a large
    run is sent on as another task carrying its pass (``detection_pass``). At most once: a copy of a
    message whose pass is running, or finished over the same results, does nothing. Once the pass
    is done, /compare/'s noise bands of its build are stored (``noise_bands``) and the run's alerts
    are planned (queue ``alerts``; a run's alerts go out once)."""
    result = detection_step(run_id=run_id, budget_s=settings.DETECTION_TASK_BUDGET_S, pass_started=pass_started)
    outcome = result.as_dict()
    if result.skipped:
        return outcome
    # New regressions of a class that bisects automatically (docs/bisect.md): their bisections start.
    outcome["bisections"] = bisections_start_auto(regression_ids=result.created)
    # ... and their commits listed by a worker's mirror (issue #41), then bisected over commits.
    outcome["commit_ranges"] = commit_ranges_request_auto(regression_ids=result.created)
    if not result.done:
        send_logged(lambda: detect_run.delay(run_id, result.pass_started), what=f"the rest of run {run_id}'s detection")
        return outcome
    send_logged(lambda: noise_bands.delay(run_id), what=f"the noise bands of run {run_id}'s build")
    # Detection has committed: the broker down now leaves the plan to the sweep, not a retry.
    send_logged(lambda: plan_run.delay(run_id), what=f"the alerts of run {run_id}")
    return outcome


@shared_task(name="regressions.noise_bands", queue="analysis", acks_late=True, **DB_RETRY)
def noise_bands(run_id: str) -> dict:
    """/compare/'s noise bands of the run's build and the one before, stored once (idempotent: a
    window whose inputs are unchanged is not computed again); a compare that finds none computes
    them itself, so a lost message costs that compare time, nothing else. Then home's judged cells
    of the run's class (``home_cells``) and /compare/'s judged comparison of its latest pair
    (``compare_cells``), judged by those bands, likewise, and the tables of the class's latest build
    (``results.services.latest_tables``); then the bands of every
    other build without them (``noise_bands_fill_on``: the sets the run made stale, a bulk import),
    so that a compare against any base reads stored bands."""
    outcome = noise_bands_refresh(run_id=run_id)
    outcome["home_cells"] = home_cells_refresh(run_id=run_id)
    outcome["compare_cells"] = compare_cells_refresh(run_id=run_id)
    outcome["latest_tables"] = latest_tables_refresh(run_id=run_id)
    # Then every other base without bands (the later builds' sets the run made stale, dropped above):
    # stored here, not by the first compare against one of them.
    outcome["filled"] = noise_bands_fill_on()
    return outcome


@shared_task(name="regressions.noise_bands_fill", queue="analysis", acks_late=True, **DB_RETRY)
def noise_bands_fill_on() -> dict:
    """The noise bands of builds that have none stored, for NOISE_BANDS_SWEEP_BUDGET_S
    (``noise_bands_fill``), sent on while some are still missing and this one stored any."""
    outcome = noise_bands_fill(budget_s=settings.NOISE_BANDS_SWEEP_BUDGET_S)
    if outcome["missing"] and outcome["computed"]:
        send_logged(noise_bands_fill_on.delay, what="the noise bands of the builds still without")
    return outcome


@shared_task(name="regressions.noise_bands_sweep", queue="analysis")
def noise_bands_sweep() -> dict:
    """Beat: the noise bands of builds that have none stored, for NOISE_BANDS_SWEEP_BUDGET_S at most
    (``noise_bands_fill``), so a compare against any base reads stored bands (what the post-ingest
    task's fill left, or lost with its message)."""
    return noise_bands_fill(budget_s=settings.NOISE_BANDS_SWEEP_BUDGET_S)


@shared_task(name="regressions.sweep", queue="analysis")
def sweep() -> dict:
    """Beat: detection of runs that never got it, alerts never planned or sent (``detection_sweep``)."""
    return detection_sweep()


@shared_task(name="regressions.bisect_advance", queue="analysis", acks_late=True, **DB_RETRY)
def bisect_advance(bisection_id: int) -> str:
    """A run of the bisection ended: decide and request the next runs (idempotent); once it has
    ended, its result goes to the subscriptions (once: ``Bisection.notified_at``)."""
    bisection = bisection_advance(bisection_id=bisection_id)
    if bisection.status != bisection.Status.RUNNING:
        delivery_plan_bisection(bisection_id=bisection.parent_id or bisection_id)  # a partner search: its parent's
    return bisection.status


@shared_task(name=COMMIT_RANGE_LISTED, queue=DASHBOARD_QUEUE, acks_late=True, **DB_RETRY)
def commit_range_listed(*, range_id: int, answer: dict, hostname: str = "") -> dict:
    """A worker listed the commits between two builds (issue #41): stored (a malformed answer is a
    failed range, named), then the regressions between them of a class that bisects automatically
    are bisected over commits."""
    row = commit_range_store(range_id=range_id, answer=answer)
    if row is None:
        return {"status": "unknown range"}
    return {"status": row.status, "commits": len(row.commits), "bisections": commit_bisections_start_auto(commit_range=row)}


@shared_task(name="pipeline.intake_request", queue=DASHBOARD_QUEUE)
def intake_request(*, machine_class: str, **run_options) -> int:
    """Beat (django-celery-beat, a periodic task edited in the admin; ``manage.py schedule_intake``):
    ask a worker of ``machine_class`` to take in the newest build; ``run_options`` (size, suite,
    workloads ...) are the nightly run then requested on it (docs/builds.md)."""
    return intake_send(machine_class=machine_class, run_options=run_options).id


@shared_task(name=INTAKE_DONE, queue=DASHBOARD_QUEUE, acks_late=True, **DB_RETRY)
def intake_done(*, intake_id: int, hostname: str = "", worker: str = "", machine_class: str = "", answer: dict | None = None) -> str:
    """A worker's answer to an intake: the build stored and its nightly requested, or the failure."""
    intake = intake_store(intake_id=intake_id, hostname=hostname, worker=worker, machine_class=machine_class, answer=answer or {})
    return intake.state if intake is not None else "unknown intake"
