"""What a runner worker does: run one case for a run, and report the builds it has.

Everything the dashboard needs travels in messages to its ``ingest`` queue (``messages``): this
process never touches the database.
"""
from __future__ import annotations

import atexit
import datetime as dt
import logging
import os
import shutil
import sys
import traceback

import redis
from celery import signals
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.log import get_logger

from runner.artifact_upload import upload_artifact
from runner.commits.ranges import commit_range as list_commit_range
from runner.ci import Client
from runner.engine.compile_pairs import CompilePairs, probe_reference
from runner.engine.executor import CaseStopped, EnvironmentProbeFailed, child_environment
from runner.engine.lifetime import device_slot, runtime_dir
from runner.engine.warm_start import WarmProcess, WarmStarter
from runner.worker.app import app, config
from runner.worker.builds import BuildUnavailable, LocalBuilds, add_taken_in, intake_config
from runner.worker.config import BuildEntry, ConfigError
from runner.worker.limits import case_request_class
from runner.worker.measure import measure_case
from contract.interpreters import interpreter_refusal
from contract.settings_policy import SettingsRefused
from contract.messages import (
    CASE_FAILED,
    CASE_FINISHED,
    CASE_STARTED,
    COMMIT_RANGE,
    COMMIT_RANGE_LISTED,
    PROBE_BUILDS,
    RUN_CASE,
    WORKER_REPORT,
    cancelled_key,
)  # fmt: skip

log = logging.getLogger("ptbench.worker")
shown = get_logger("ptbench.worker.cases")  # under Celery's logger: the worker's log shows it (runner.worker.startup)
# Errors of the machine, not of the case: retried (with backoff), then reported as failed cases.
INFRASTRUCTURE_ERRORS = (BuildUnavailable, EnvironmentProbeFailed, OSError, SoftTimeLimitExceeded)
PUBLISH_RETRY = {"max_retries": 20, "interval_start": 1, "interval_step": 2, "interval_max": 30}


_state: dict = {"builds": None, "redis": None, "extra": (), "pairs": None, "warm": {}, "refused": ()}  # extra: interpreters the dashboard asked to probe


def compile_pairs() -> CompilePairs | None:
    """The compile pairs PTBENCH_COMPILE_REFERENCE asks for (its interpreter probed once), or None."""
    if not config.compile_reference:
        return None
    if _state["pairs"] is None:
        if shutil.which(config.compile_reference) is None:
            raise ConfigError(f"PTBENCH_COMPILE_REFERENCE={config.compile_reference!r}: not an executable file")
        _state["pairs"] = CompilePairs(reference=probe_reference(config.compile_reference), pairs=config.compile_pairs)
    return _state["pairs"]


def artifact_uploader():
    """Where a case's kept trace goes: an upload to PTBENCH_DASHBOARD_URL (the result then carries
    its sha256 only, never the file, through the broker), or None (no trace kept)."""
    if not config.dashboard_url:
        return None
    client = Client(config.dashboard_url, token=config.api_token or None)
    return lambda path, reference: upload_artifact(client=client, path=path, reference=reference)


_warm_processes: list[WarmProcess] = []


@atexit.register
def _stop_warm_processes() -> None:
    if os.getpid() == _state.get("main_pid"):
        for warm in _warm_processes:
            warm.stop()


def warm_starter(python: str) -> WarmStarter | None:
    """The warm process that forks ``python``'s cases (started with the worker), or None."""
    return _state["warm"].get(os.path.realpath(python))


def start_warm_processes(builds: LocalBuilds) -> None:
    """In the worker's main process, before the pool starts (its processes inherit the starters):
    a warm process per interpreter that PTBENCH_WARM_START names (runner.engine.warm_start). Each
    imports while the worker starts; a case that comes first waits for it."""
    if config.warm_start == "off":
        return
    _state["main_pid"] = os.getpid()
    own = os.path.realpath(sys.executable)
    # (a venv's python is a link to the base interpreter: started by its own path, known by the real one)
    pythons = {os.path.realpath(b.python): b.python for b in builds.builds if not (b.environment["build"].get("overrides") or {}).get("env")}
    for real, python in sorted(pythons.items()):
        if config.warm_start != "all" and real != own:
            continue
        warm = WarmProcess.launch(python, runtime_dir() / "warm", child_environment(None))
        _state["warm"][real] = warm.starter()
        _warm_processes.append(warm)  # this process's: stopped with it (and dies with it: prctl)
        _state.setdefault("said", []).append(f"warm process {warm.process.pid} of {python} (PTBENCH_WARM_START="
                                             f"{config.warm_start}), log {warm.log_path}")


def local_builds() -> LocalBuilds:
    if _state["builds"] is None:
        _state["builds"] = LocalBuilds.probe(config.builds + _state["extra"])
        try:
            add_taken_in(_state["builds"], intake_config())  # the builds taken in before (issue #41)
        except ValueError as exc:
            _state["builds"].errors.append({"python": "PTBENCH_INTAKE_*", "error": str(exc)})
    return _state["builds"]


def run_cancelled(run_id: str) -> bool:
    """Whether the dashboard cancelled the run (a Redis key); unknown counts as not cancelled."""
    try:
        if _state["redis"] is None:
            _state["redis"] = redis.Redis.from_url(config.broker_url, socket_timeout=5)
        return bool(_state["redis"].exists(cancelled_key(run_id)))
    except redis.RedisError:
        return False


def notify(task_name: str, **kwargs) -> None:
    """Hand a message to the dashboard (retried while the broker is unreachable)."""
    app.send_task(task_name, kwargs=kwargs, retry=True, retry_policy=PUBLISH_RETRY)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


def _worker_facts(task) -> dict:
    return {"hostname": config.hostname, "worker": task.request.hostname, "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


class _CaseTask(app.Task):
    """``run_case``'s class: a case whose infrastructure errors ran out of retries is reported failed."""

    def on_failure(self, exc, task_id, args, kwargs, einfo):
        if isinstance(exc, INFRASTRUCTURE_ERRORS):
            reason = f"{type(exc).__name__}: {exc}"[:4000]
            notify(CASE_FAILED, case_id=kwargs["case_id"], run_id=kwargs["run_id"], reason=reason,
                   attempts=self.request.retries + 1, **_worker_facts(self))


# Celery retries an infrastructure error (autoretry_for) after PTBENCH_RETRY_DELAY_S, doubling each
# time (retry_backoff; no jitter, no cap below the last delay), at most PTBENCH_MAX_RETRIES times; in
# eager mode the retries follow at once. The last one's error fails the task (``_CaseTask.on_failure``).
# Its time limits: the dashboard's, widened by this worker's compile pairs (``limits``).
@app.task(name=RUN_CASE, bind=True, base=_CaseTask, acks_late=True, reject_on_worker_lost=True,
          Request=case_request_class(lambda: config.compile_pairs if config.compile_reference else 0),
          autoretry_for=INFRASTRUCTURE_ERRORS, max_retries=config.max_retries, default_retry_delay=0,
          retry_backoff=config.retry_delay_s or False, retry_jitter=False,
          retry_backoff_max=int(config.retry_delay_s * 2**config.max_retries))
def run_case(self, **message) -> dict:
    """Measure one case of a run and hand its one-result run document to the dashboard.

    A case that fails (compile error, timeout, crash...) is a result like any other and is never
    retried; only infrastructure errors are (by Celery, see above).
    """
    taken_at = _now()
    case_id, run_id = message["case_id"], message["run_id"]
    if run_cancelled(run_id):
        return {"case_id": case_id, "outcome": "cancelled"}
    facts = _worker_facts(self)

    def started() -> None:
        notify(CASE_STARTED, case_id=case_id, run_id=run_id, attempt=self.request.retries + 1,
               redelivered=bool((self.request.delivery_info or {}).get("redelivered")), **facts)

    try:
        document = measure_case(**message, local=local_builds(), machine_class=config.machine_class, worker=facts,
                                notify_started=started, should_stop=lambda: run_cancelled(run_id), compile_pairs=compile_pairs(),
                                allow=config.allow, artifact_sink=artifact_uploader(), artifact_max_bytes=config.artifact_max_bytes,
                                warm_start=warm_starter)
    except CaseStopped:
        return {"case_id": case_id, "outcome": "cancelled"}
    except SettingsRefused as exc:  # never retried: the message itself is refused (issue #33)
        log.error("case %s of run %s: %s", case_id, run_id, exc)
        notify(CASE_FAILED, case_id=case_id, run_id=run_id, reason=str(exc)[:4000], attempts=self.request.retries + 1, **facts)
        return {"case_id": case_id, "outcome": "refused"}
    # When this worker took the case and handed its result over (bench/dispatch_overhead.py).
    document["results"][0]["environment"]["worker"].update(taken_at=taken_at, handed_over_at=_now())
    notify(CASE_FINISHED, case_id=case_id, document=document)
    return {"case_id": case_id, "outcome": document["results"][0]["status"]}


@app.task(name=PROBE_BUILDS, bind=True)
def probe_builds(self, python: str = "") -> dict:
    """Probe the configured interpreters again (a build was installed or updated) and report each
    build with its environment and config catalog. The dashboard sends this (the admin, or a variant
    whose base build's config keys it does not know yet): probing runs here, never in a web request.
    ``python``: one more interpreter of this machine to probe, kept until the worker restarts (put
    it in PTBENCH_BUILDS to keep it for good). Only under PTBENCH_BUILDS_ROOT: any other path is
    refused here, reported as the probe's error, never run (``contract.interpreters``)."""
    configured = {e.python for e in config.builds + _state["extra"]}
    _state["refused"] = ()  # a refusal is reported with the probe that asked for it
    if python and python not in configured:
        refusal = interpreter_refusal(python, roots=config.builds_roots, known=configured | {sys.executable})
        if refusal is not None:
            log.error("probe of %s refused: %s", python, refusal)
            _state["refused"] = ({"python": python, "error": f"refused: {refusal}"},)
        else:
            _state["extra"] += (BuildEntry(python=python, local_label=None),)
    _state["builds"] = None
    return report_builds(worker=self.request.hostname)


@app.task(name=COMMIT_RANGE)
def commit_range(*, range_id: int, good_sha: str, bad_sha: str) -> dict:
    """List the commits between two builds from this worker's mirror (PTBENCH_TORCH_MIRROR) and
    hand the answer (or why there is none) to the dashboard (issue #41)."""
    answer = list_commit_range(good_sha=str(good_sha), bad_sha=str(bad_sha))
    notify(COMMIT_RANGE_LISTED, range_id=range_id, answer=answer, hostname=config.hostname)
    return {"commits": len(answer.get("commits", [])), "error": answer.get("error", "")}


def report_builds(*, worker: str) -> dict:
    builds = local_builds()
    errors = [*builds.errors, *_state.get("refused", ())]
    notify(WORKER_REPORT, hostname=config.hostname, worker=worker, machine_class=config.machine_class,
           builds=builds.report(), errors=errors)
    return {"builds": len(builds.builds), "errors": len(errors)}


@signals.worker_init.connect
def _check_and_probe(**_) -> None:
    """Before the pool starts: refuse to start misconfigured, and probe the builds once (the
    pool's processes inherit the answer)."""
    config.require()
    os.environ.update(config.case_environment)  # several cases at once: compile threads, the CPU's lock (slots)
    _state.setdefault("said", []).append(f"{config.cases_at_once} case(s) at once on {device_slot()}"
                                         + "".join(f", {k}={v}" for k, v in config.case_environment.items()))
    builds = local_builds()
    start_warm_processes(builds)
    for entry in builds.builds:
        log.info("build %s at %s", entry.key, entry.python)
    for error in builds.errors:
        log.error("build at %s unusable: %s", error["python"], error["error"])
    if config.compile_reference:  # a reference that cannot describe itself stops the worker here
        log.info("compile reference %s (%d pairs per case)", compile_pairs().reference.python, config.compile_pairs)


@signals.worker_ready.connect
def _report_on_start(sender=None, **_) -> None:
    for line in _state.get("said", []):  # what worker_init set up, once the worker's log shows it
        shown.info("%s", line)
    try:
        report_builds(worker=getattr(sender, "hostname", config.hostname))
    except Exception:  # noqa: BLE001 (the worker still works without its report)
        log.error("could not report builds:\n%s", traceback.format_exc())
