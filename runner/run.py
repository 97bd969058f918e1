"""``python -m runner run``: the arguments checked against the build's environment, the cases
planned and run in turn with a progress line, the document built and handed to ``runner.output``."""
from __future__ import annotations

import argparse
import getpass
import os
import shlex
import shutil
import socket
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from contract.modes import TORCH_COMPILE_MODES
from runner.arguments import DEFAULT_TIMEOUT_S
from runner.listing import resolve_workloads
from runner.output import deliver_document, save_unsent, write_atomically


def _command_line(argv: Sequence[str]) -> str:
    return "python -m runner " + shlex.join(argv)


@dataclass(frozen=True)
class RunSettings:
    """What ``run`` will do, resolved from the arguments and the build's environment."""

    python: str
    environment: dict
    device: str
    size: str
    modes: list[str]
    machine_class: str
    overrides: object = None  # contract.variants.Overrides (empty for a plain build)
    compile_pairs: object = None  # runner.engine.compile_pairs.CompilePairs, or None


def resolve_run_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> RunSettings:
    """Check the arguments that need the build's environment; exits with a usage error (2)."""
    from runner.engine.environment import machine_class_for
    from runner.engine.executor import EnvironmentProbeFailed, probe_environment

    from contract.settings_policy import Allowance
    from contract.variants import InvalidOverride, Overrides, apply_variant

    python = shutil.which(args.python)
    if python is None:
        parser.error(f"--python {args.python}: not an executable file")
    if args.out and args.url:
        parser.error("--out and --url: give one (write the document, or post it)")
    if args.out and not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: directory {args.out.parent} does not exist")
    try:  # only settings that are data, unless this machine's operator admits more (issue #33)
        overrides = Overrides.from_cli(args.config, args.env, allow=Allowance.from_environ(os.environ))
    except InvalidOverride as exc:
        parser.error(f"--config/--env {exc}")
    except ValueError as exc:  # PTBENCH_ALLOW_SETTINGS malformed
        parser.error(str(exc))
    try:
        environment = probe_environment(python, overrides=overrides)
    except EnvironmentProbeFailed as exc:
        parser.exit(1, f"error: {exc}\n")
    problems = environment.pop("override_problems", [])
    if problems:
        parser.error("; ".join(f"{p['field']}: {p['message']}" for p in problems))
    environment["build"] = apply_variant(environment["build"], overrides)
    device = args.device or ("cuda" if environment["cuda_available"] else "cpu")
    if device == "cuda" and not environment["cuda_available"]:
        parser.error(f"--device cuda: the build at {python} sees no CUDA GPU")
    if args.modes:
        modes = args.modes
    else:
        modes = list(TORCH_COMPILE_MODES) if device == "cuda" and args.backend == "inductor" else ["default"]
    if args.backend != "inductor" and modes != ["default"]:
        print(f"note: backend {args.backend} ignores compile modes; each mode runs the same compile", file=sys.stderr)
    gpu_class = machine_class_for(environment["machine"]["gpu_name"]) if device == "cuda" else "cpu"
    compile_pairs = _compile_pairs(args, parser, device)
    return RunSettings(
        python=python,
        environment=environment,
        device=device,
        size=args.size or ("full" if device == "cuda" else "tiny"),
        modes=modes,
        machine_class=args.machine_class or gpu_class,
        overrides=overrides,
        compile_pairs=compile_pairs,
    )


def _compile_pairs(args: argparse.Namespace, parser: argparse.ArgumentParser, device: str):
    """The CompilePairs that ``--compile-reference``/``--compile-pairs`` ask for (the reference probed once), or None."""
    from runner.engine.compile_pairs import DEFAULT_PAIRS, CompilePairs, probe_reference
    from runner.engine.executor import EnvironmentProbeFailed

    if args.compile_reference is None:
        if args.compile_pairs is not None:
            parser.error("--compile-pairs: needs --compile-reference (the pinned interpreter compiled beside each case)")
        return None
    python = shutil.which(args.compile_reference)
    if python is None:
        parser.error(f"--compile-reference {args.compile_reference}: not an executable file")
    try:
        reference = probe_reference(os.path.abspath(python), device=device)
    except EnvironmentProbeFailed as exc:
        parser.error(f"--compile-reference {args.compile_reference}: {str(exc).splitlines()[0]}")
    return CompilePairs(reference=reference, pairs=args.compile_pairs or DEFAULT_PAIRS)


def run_planned_cases(plan, settings: RunSettings, args: argparse.Namespace, on_case=None, artifacts=None) -> list[dict]:
    """Each case in turn, with the progress line; KeyboardInterrupt (Ctrl-C, or ``lifetime.Terminated``
    on SIGTERM/SIGHUP) passes through once the case in flight is killed.

    ``on_case(results_so_far)`` runs after every case (the partial ``--out`` document);
    ``artifacts`` (``runner.engine.artifacts.ArtifactKeeper``) keeps each case's compile trace.
    """
    from runner.engine.executor import CaseExecutor
    from runner.engine.progress import Progress

    executor = CaseExecutor(python=settings.python, timeout_s=args.timeout, warm=not args.no_warm,
                            compile_pairs=settings.compile_pairs, artifacts=artifacts)
    progress = Progress(len(plan.cases))
    results = []
    try:
        for index, case in enumerate(plan.cases, start=1):
            progress.start_case(index, case.spec.label)
            result = executor.run(case.spec, workload_name=case.workload_name, repro=case.repro)
            progress.finish_case(result["status"])
            results.append(result)
            if on_case is not None:
                on_case(results, len(plan.cases))
    finally:
        progress.close()
    return results


def command_run(args: argparse.Namespace, argv: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from contract.document import require_validator
    from contract.planning import plan_cases
    from runner.report import build_document, now_iso

    require_validator()
    try:
        workloads = resolve_workloads(_requested_names(args), allow_import=True)
    except LookupError as exc:
        parser.error(str(exc))
    if not workloads:
        parser.error("no workloads to run")
    started_at = now_iso()
    settings = resolve_run_settings(args, parser)
    plan = plan_cases(
        workloads,
        modes=settings.modes,
        regimes=args.regimes,
        dtypes=args.dtypes,
        device=settings.device,
        backend=args.backend,
        size=settings.size,
        repro_python=None if settings.python == sys.executable else args.python,
        repro_timeout_s=None if args.timeout == DEFAULT_TIMEOUT_S else args.timeout,
        import_allowed=True,
        overrides=settings.overrides,
        dims=args.dims,
    )
    for line in plan.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    if not plan.cases:
        parser.error("no case to run (every combination was skipped)")
    build = settings.environment["build"]
    print(
        f"ptbench: {len(plan.cases)} cases, size {settings.size}, torch {build['torch_version']} ({build['git_sha'][:12]}), "
        f"{settings.device}, machine class {settings.machine_class}",
        file=sys.stderr,
    )
    def document_for(results: list[dict]) -> dict:
        return build_document(
            size=settings.size,
            environment=settings.environment,
            machine_class=settings.machine_class,
            build_label=args.build_label,
            workloads=[w for _, w in workloads],
            results=results,
            started_at=started_at,
            finished_at=now_iso(),
            command=_command_line(argv),
            requested_by=_requested_by(),
            reason=args.reason,
        )

    run_id = str(uuid.uuid4())  # named before the first case: its artifacts' directory bears it
    artifacts, scratch = _artifact_keeper(args, parser, run_id)

    def write_partial(results: list[dict], total: int) -> None:
        # A run killed from outside (a CI or device time limit) keeps every finished case.
        document = document_for(results)
        document["run"]["id"] = run_id
        if len(results) < total:
            document["run"]["notes"] = f"partial: {len(results)} of {total} cases (the run is still going or was stopped)"
        write_atomically(args.out, document)

    try:
        return _run_and_deliver(plan, settings, args, document_for, run_id, artifacts, write_partial)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _artifact_keeper(args: argparse.Namespace, parser: argparse.ArgumentParser, run_id: str):
    """(the ArtifactKeeper of this run, a scratch directory to remove after delivery or None):
    with ``--out``, the files go beside the document in a directory named for the run."""
    from runner.engine.artifacts import ArtifactKeeper, max_bytes_from_environ

    if args.artifact_max_bytes is not None:
        max_bytes = args.artifact_max_bytes
    else:
        try:
            max_bytes = max_bytes_from_environ()
        except ValueError as exc:
            parser.error(str(exc))
    if args.out:
        folder = args.out.resolve().parent
        return ArtifactKeeper(directory=folder / run_id, max_bytes=max_bytes, relative_to=folder), None
    scratch = Path(tempfile.mkdtemp(prefix="ptbench-artifacts-"))
    return ArtifactKeeper(directory=scratch / run_id, max_bytes=max_bytes, relative_to=scratch), scratch


def _run_and_deliver(plan, settings: RunSettings, args: argparse.Namespace, document_for, run_id: str, artifacts,
                     write_partial) -> int:
    from contract.document import InvalidDocument
    from runner.report import status_counts, summary_table

    try:
        results = run_planned_cases(plan, settings, args, on_case=write_partial if args.out else None, artifacts=artifacts)
    except KeyboardInterrupt as exc:
        kept = f"; the finished cases are in {args.out}" if args.out and args.out.exists() else ": nothing stored"
        print(f"\ninterrupted{kept}", file=sys.stderr)
        return interrupted_status(exc)
    print(summary_table(results))
    print(f"\n{len(results)} cases: {status_counts(results)}")
    try:
        document = document_for(results)
        document["run"]["id"] = run_id
    except InvalidDocument as exc:
        saved = save_unsent({"errors": [str(e) for e in exc.errors], "environment": settings.environment, "results": results}, "invalid")
        print(f"error: {exc}\nthe results are saved in {saved}", file=sys.stderr)
        return 1
    return deliver_document(document, args.out, url=args.url, token=args.token,
                            artifacts_root=None if args.out else artifacts.relative_to)


def interrupted_status(exc: KeyboardInterrupt) -> int:
    """128 + the signal that stopped the run, as a shell reports it (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + getattr(exc, "signum", 2)


def _requested_names(args: argparse.Namespace) -> list[str] | None:
    """``--workloads``, then ``--suite``'s workloads (contract.suites); None for neither: the core suite."""
    from contract.suites import suite_workloads

    if not args.suite:
        return args.workloads
    return list(dict.fromkeys([*(args.workloads or []), *suite_workloads(args.suite)]))


def _requested_by() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        user = os.environ.get("USER", "unknown")
    return f"{user}@{socket.gethostname()}"
