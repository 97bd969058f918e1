"""Cases run in this process when Celery runs eagerly (no broker: the SQLite quick start).

The same measurement as a runner worker (``runner.worker.tasks.measure_case``) and the same
services for what it reports, without a queue in between. Cases run one after another: one sent
while a case runs in this thread (its end moved a bisection on, which requested the next runs) runs
after it, from the outermost call (``case_run_queued``), never inside it.
"""
from __future__ import annotations

import collections
import os
import shutil
import socket
import sys
import threading
import time

from runner.engine.executor import EnvironmentProbeFailed
from runner.worker.builds import BuildUnavailable, LocalBuilds
from runner.worker.config import BuildEntry
from contract.case_config import CaseConfig
from contract.interpreters import builds_roots, interpreter_refusal
from contract.settings_policy import SettingsRefused

_probed: dict[str, LocalBuilds] = {}  # interpreter path -> its probe, once per process
_thread = threading.local()  # per thread (the quick start's runserver answers in threads): its queued cases


def _local_builds(*, build) -> LocalBuilds:
    """This interpreter, and every interpreter registered for the build (or, for a variant, its base:
    a variant runs on its base's interpreter) that exists here."""
    from dashboard.dispatch.models import BuildEnvironment
    from dashboard.results.variants import base_of

    builds = [build] + ([base] if (base := base_of(build)) is not None else [])
    pythons = [sys.executable] + [p for p in BuildEnvironment.objects.filter(build__in=builds).values_list("python", flat=True)
                                  if shutil.which(p)]
    found = LocalBuilds()
    for python in dict.fromkeys(pythons):
        if python not in _probed:
            _probed[python] = LocalBuilds.probe((BuildEntry(python=python, local_label=None),))
        found.builds += _probed[python].builds
        found.errors += _probed[python].errors
    return found


def _artifact_store(path, reference: dict) -> None:
    """A case's kept trace, stored here directly (the same store the upload endpoint fills)."""
    from dashboard.results.artifacts import artifact_store

    with open(path, "rb") as source:
        artifact_store(source=source, sha256=reference["sha256"], name=reference["name"])


def case_run_queued(*, machine_class: str, message: dict) -> None:
    """Run a case sent without a broker (``broker.case_send``, after the sender's commit): now, or,
    when a case is running in this thread already, once it and the cases queued before it are done.
    The end of a case may send the next (``bisection_advance``: a bisection's next runs, an eager
    task after the commit); run inside it, every run of a search would nest its commit, task and
    case one level deeper (27 frames a run: a bisection's 40 runs would pass Python's recursion
    limit). Queued here, the outermost call runs them in a loop, at the same depth each, and returns
    once none is left: a request still returns with its cases done. A case that raises drops the
    ones queued behind it (as Django drops the rest of a commit's callbacks): they stay pending."""
    queue = getattr(_thread, "queue", None)
    if queue is not None:
        queue.append((machine_class, message))
        return
    _thread.queue = queue = collections.deque([(machine_class, message)])
    try:
        while queue:
            queued_class, queued_message = queue.popleft()
            case_run_inprocess(machine_class=queued_class, message=queued_message)
    finally:
        if queue:
            print(f"{len(queue)} queued case(s) not run: the one before them raised", file=sys.stderr, flush=True)
        del _thread.queue


def case_run_inprocess(*, machine_class: str, message: dict) -> str:
    from dashboard.dispatch import services
    from dashboard.results.models import Build
    from runner.worker.measure import measure_case

    case_id = message["case_id"]
    spec, started = message["spec"], time.monotonic()
    label = f"{message['workload']['name']} {CaseConfig.picked_from(spec).key}"
    worker = {"hostname": socket.gethostname(), "worker": "in-process", "cuda_visible_devices": None}
    build = Build.objects.get(git_sha=message["build"]["git_sha"], local_label=message["build"]["local_label"])
    try:
        document = measure_case(
            **message, local=_local_builds(build=build), machine_class=machine_class, worker=worker,
            notify_started=lambda: services.case_started(case_id=case_id, worker="in-process", hostname=worker["hostname"]),
            artifact_sink=_artifact_store,
        )
    except (BuildUnavailable, EnvironmentProbeFailed, OSError, SettingsRefused) as exc:
        print(f"case {label}: failed without a result: {exc}", file=sys.stderr, flush=True)
        return services.case_failed(case_id=case_id, reason=f"{type(exc).__name__}: {exc}", worker="in-process",
                                    hostname=worker["hostname"])
    print(f"case {label}: {document['results'][0]['status']} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    return services.case_finished(case_id=case_id, document=document)


def commit_range_inprocess(*, good_sha: str, bad_sha: str) -> dict:
    """Without a broker: the commits between two builds from this host's mirror (PTBENCH_TORCH_MIRROR),
    as a worker would list them (``runner.commits.ranges``)."""
    from runner.commits.ranges import commit_range

    return commit_range(good_sha=good_sha, bad_sha=bad_sha)


def probe_inprocess(*, machine_class: str, python: str = "") -> int:
    """A probe without a broker (``build_probe_request``): this host's interpreter (or ``python``)
    probed after the request's commit, as a worker of ``machine_class`` would, and its build
    recorded with its config catalog. Returns how many builds it recorded."""
    from dashboard.dispatch.models import BuildEnvironment
    from dashboard.dispatch.services.builds import build_environment_record

    # This process is the worker here: the same rule as a runner worker's (contract.interpreters).
    if python and (refusal := interpreter_refusal(python, roots=builds_roots(os.environ), known={sys.executable})):
        print(f"probe of {python} refused: {refusal}", file=sys.stderr, flush=True)
        return 0
    probed = LocalBuilds.probe((BuildEntry(python=python or sys.executable, local_label=None),))
    _probed.pop(python or sys.executable, None)  # the next case probes it afresh too
    for error in probed.errors:
        print(f"probe of {error['python']}: {error['error']}", file=sys.stderr, flush=True)
    for found in probed.builds:
        build_environment_record(environment=found.environment, python=found.python, machine_class=machine_class,
                                 hostname=socket.gethostname(), worker="in-process",
                                 source=BuildEnvironment.Source.REGISTERED, catalog=found.catalog)
    return len(probed.builds)


def intake_inprocess(*, protect: list[str]) -> dict:
    """Without a broker: an intake taken by this process from its own settings (PTBENCH_INTAKE_*),
    as a worker would (``runner.intake``)."""
    from runner.intake.config import IntakeConfig, IntakeConfigError
    from runner.intake.take import intake_run

    try:
        config = IntakeConfig.from_env()
    except IntakeConfigError as exc:
        return {"ok": False, "version": "", "error": str(exc), "log": ""}
    if config is None:
        return {"ok": False, "version": "", "log": "", "error": "this process has no PTBENCH_INTAKE_INDEX (docs/builds.md)"}
    return intake_run(config, protect=set(protect))
