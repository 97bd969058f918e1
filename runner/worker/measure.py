"""One case of a requested run, measured: the part of a worker's task that a dashboard running
tasks in-process (no broker) runs too. No Celery, no Django."""
from __future__ import annotations

import tempfile
from pathlib import Path

from runner.engine.artifacts import DEFAULT_MAX_BYTES, ArtifactKeeper
from runner.engine.executor import CaseExecutor
from contract.spec import CaseSpec
from runner.report import build_document, now_iso
from runner.worker.builds import LocalBuilds
from runner.worker.overlays import find_or_overlay
from runner.worker.screening import message_screen
from contract.settings_policy import DATA_ONLY, Allowance


class _Workload:
    """A workload as the document needs it (name + description), without importing the suite:
    the worker's own interpreter need not have torch; the dashboard sends the description."""

    def __init__(self, description: dict):
        self.name, self._description = description["name"], description

    def describe(self) -> dict:
        return self._description


def measure_case(*, case_id: int, run_id: str, build: dict, spec: dict, workload: dict, timeout_s: float,
                 local: LocalBuilds, machine_class: str, worker: dict, notify_started, size: str = "", suite: str = "",
                 warm: bool = True, repro: str = "", requested_by: str = "", should_stop=None, compile_pairs=None,
                 allow: Allowance = DATA_ONLY, artifact_sink=None, artifact_max_bytes: int = DEFAULT_MAX_BYTES,
                 warm_start=None) -> dict:
    """Measure one case of a run; returns its one-result run document. Raises BuildUnavailable,
    CaseStopped, or an infrastructure error; a failing case is a result, not an exception.
    ``compile_pairs``: the worker's ``runner.engine.compile_pairs.CompilePairs``, or None.
    Raises ``SettingsRefused`` before anything runs when the message carries a setting that is not
    data and that ``allow`` (the worker's PTBENCH_ALLOW_SETTINGS) does not admit (issue #33).
    ``size``: the run's size (``suite`` in messages queued before #34; the spec's own when neither).
    ``artifact_sink(path, reference)``: hands the case's kept compile trace to the dashboard (an
    upload; docs/artifacts.md), so that the result carries only its reference; None keeps none.
    ``warm_start(python)``: the warm process that forks that interpreter's cases
    (``runner.engine.warm_start.WarmStarter``) or None (a fresh process per case)."""
    message_screen(spec=spec, build=build, allow=allow)
    interpreter = find_or_overlay(local, build)  # an overlay build (issue #41) is made here from the worker's mirror
    notify_started()
    started_at = now_iso()
    with tempfile.TemporaryDirectory(prefix="ptbench-artifacts-") as scratch:
        keeper = ArtifactKeeper(directory=Path(scratch), max_bytes=artifact_max_bytes) if artifact_sink else None
        executor = CaseExecutor(python=interpreter.python, timeout_s=timeout_s, warm=warm, should_stop=should_stop,
                                compile_pairs=compile_pairs, artifacts=keeper,
                                warm_start=warm_start(interpreter.python) if warm_start else None)
        # A message never lets the case process import a module it names (workloads.registry).
        result = executor.run(CaseSpec(**{**spec, "import_allowed": False}), workload_name=workload["name"], repro=repro)
        if keeper is not None and result.get("artifact"):
            _hand_over(artifact_sink, keeper.local_path(result["artifact"]), result["artifact"])
    result["environment"]["worker"] = worker
    document = build_document(
        size=size or suite or spec["size"],  # ``suite``: a message queued before #34 named the size so
        environment=interpreter.environment,
        machine_class=machine_class,
        build_label=build.get("label") or None,
        workloads=[_Workload(workload)],
        results=[result],
        started_at=started_at,
        finished_at=now_iso(),
        command=repro,
        requested_by=requested_by,
    )
    document["run"]["id"] = run_id
    return document


def _hand_over(sink, path: Path, reference: dict) -> None:
    """The artifact to the dashboard; a failure is said in the reference, never loses the result."""
    try:
        sink(path, reference)
    except Exception as exc:  # noqa: BLE001 (the measurement is worth more than its trace)
        reference["upload_error"] = f"{type(exc).__name__}: {exc}"[:2000]
