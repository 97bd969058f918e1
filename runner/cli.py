"""``python -m runner``: run a suite, list it, and the internal subcommands of case subprocesses.

    python -m runner run --suite tiny --workloads mlp_loop --out run.json
    python -m runner list
    python -m runner ci verdict --url URL --build BUILD               (CI: see runner/ci.py)
    python -m runner case --spec SPEC.json --result RESULT.json     (internal: one case)
    python -m runner environment --out ENV.json                       (internal: describe the build)
    python -m runner compile-once --spec SPEC.json --result R.json    (internal: one side of a compile pair)

Imports stay inside the subcommands: ``case`` and ``environment`` run in the build's interpreter,
which need not have jsonschema or Django.
"""
from __future__ import annotations

import argparse
import getpass
import json
import os
import shlex
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from contract.arguments import machine_class as _machine_class
from contract.arguments import name_list as _name_list
from contract.vocabulary import BACKENDS, COMPILE_MODES, DEVICES, DTYPES, SHAPE_REGIMES, SIZES

DEFAULT_TIMEOUT_S = 900.0


def _choices_list(allowed: Sequence[str], what: str):
    def parse(text: str) -> list[str]:
        values = [v.strip() for v in text.split(",") if v.strip()]
        unknown = [v for v in values if v not in allowed]
        if unknown or not values:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(unknown) or '(none given)'}; choose from {', '.join(allowed)}")
        return list(dict.fromkeys(values))

    return parse


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _pair_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 20:
        raise argparse.ArgumentTypeError("from 1 to 20")
    return value


def _build_label(text: str) -> str:
    if len(text) > 200:
        raise argparse.ArgumentTypeError("at most 200 characters")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m runner", description="ptbench: benchmark torch.compile cases")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a suite and store (or write) its run document")
    run.add_argument("--suite", choices=SIZES, help="workload size: tiny (CPU, tests) or full (GPU); default tiny on cpu, full on cuda")
    run.add_argument("--workloads", type=_name_list, help="comma-separated names (or package.module:Class); default: the whole suite")
    run.add_argument("--modes", type=_choices_list(COMPILE_MODES, "compile mode"), help="default: all four on cuda, 'default' on cpu")
    run.add_argument("--regimes", type=_choices_list(SHAPE_REGIMES, "shape regime"), default=list(SHAPE_REGIMES))
    run.add_argument("--dtypes", type=_choices_list(DTYPES, "dtype"), help="default: each workload's first dtype")
    run.add_argument("--device", choices=DEVICES, help="default: cuda when the build sees a GPU, else cpu")
    run.add_argument("--backend", choices=BACKENDS, default="inductor", help="eager/aot_eager exercise the engine without inductor")
    run.add_argument("--python", default=sys.executable, help="the build's interpreter (default: this one)")
    run.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT_S, help="seconds per case subprocess")
    run.add_argument("--no-warm", action="store_true", help="skip the warm-compile subprocess")
    run.add_argument("--machine-class", type=_machine_class, help="series grouping, e.g. gpu-h100 (default: from the GPU model, or cpu)")
    run.add_argument("--build-label", type=_build_label, help="human name of the build, e.g. 'nightly 2026-11-21'")
    run.add_argument("--out", type=Path, help="write the run document here instead of storing it in the database")
    run.add_argument("--url", help="post the run document to the dashboard's API at this URL instead of manage.py ingest")
    run.add_argument("--token", default=os.environ.get("PTBENCH_API_TOKEN"), help="API token for --url (default $PTBENCH_API_TOKEN)")
    run.add_argument("--config", action="append", metavar="SECTION.KEY=VALUE",
                     help="a build variant: set torch._inductor/_dynamo/_functorch.config KEY in every case process "
                          "(SECTION inductor, dynamo or functorch; repeatable); checked against the build's torch")
    run.add_argument("--env", action="append", metavar="NAME=VALUE",
                     help="a build variant: set TORCHINDUCTOR_*/TORCHDYNAMO_*/TORCH_*/TRITON_* in every case process (repeatable)")
    run.add_argument("--compile-reference", metavar="PYTHON",
                     help="the machine class's pinned reference interpreter: each case that compiled is compiled again, in "
                          "fresh processes, beside this one's compile of it (no overrides); compile_cpu_ratio = compile "
                          "CPU time over the reference's, steady where the host's speed drifts")
    run.add_argument("--compile-pairs", type=_pair_count, metavar="N",
                     help="compile pairs per case with --compile-reference (default 3; their geometric mean is kept)")

    listing = commands.add_parser("list", help="print the suite's workloads")
    listing.add_argument("--workloads", type=_name_list, help="only these (names or package.module:Class)")
    listing.add_argument("--json", action="store_true", help="print the catalog entries as JSON (contract/catalog.json)")
    listing.add_argument("--family", help="a family's models (hf, timm, torchvision, or all), with why any cannot be built here")
    listing.add_argument("--names", action="store_true", help="with --family: only the names this host can build, comma-separated")

    case = commands.add_parser("case", help="(internal) run one case spec in this process")
    case.add_argument("--spec", type=Path, required=True)
    case.add_argument("--result", type=Path, required=True)

    # Parsed by runner.ci (main() hands it everything after "ci"); listed here for --help.
    commands.add_parser("ci", help="CI client of the dashboard's API: submit, request, wait, verdict (see: ci --help)")

    once = commands.add_parser("compile-once", help="(internal) one side of a compile pair: compile a case spec when told")
    once.add_argument("--spec", type=Path, required=True)
    once.add_argument("--result", type=Path, required=True)

    environment = commands.add_parser("environment", help="(internal) describe this interpreter's build and machine")
    environment.add_argument("--out", type=Path, required=True)
    environment.add_argument("--check-config", type=Path, help="(internal) JSON {SECTION.KEY: value} to check against this torch")
    environment.add_argument("--catalog", action="store_true", help="(internal) add config_catalog: this torch's config keys and types")
    return parser


def resolve_workloads(names: list[str] | None, *, allow_import: bool = False) -> list[tuple[str, object]]:
    """(name as requested, Workload) pairs; raises LookupError with a readable message.

    ``allow_import``: ``module:Class`` names may import their module (the local CLI only; see
    ``workloads.registry``)."""
    from workloads.registry import all_workloads, get_workload

    if not names:
        try:
            return [(w.name, w) for w in all_workloads()]
        except ModuleNotFoundError as exc:
            raise LookupError(f"the suite cannot be loaded ({exc}); name workloads with --workloads") from None
    resolved = []
    for name in names:
        try:
            resolved.append((name, get_workload(name, allow_import=allow_import)))
        except (KeyError, ImportError, AttributeError, ValueError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise LookupError(f"workload {name!r}: {message}") from None
    return resolved


def _command_line(argv: Sequence[str]) -> str:
    return "python -m runner " + shlex.join(argv)


@dataclass(frozen=True)
class RunSettings:
    """What ``run`` will do, resolved from the arguments and the build's environment."""

    python: str
    environment: dict
    device: str
    suite: str
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
        modes = list(COMPILE_MODES) if device == "cuda" and args.backend == "inductor" else ["default"]
    if args.backend != "inductor" and modes != ["default"]:
        print(f"note: backend {args.backend} ignores compile modes; each mode runs the same compile", file=sys.stderr)
    gpu_class = machine_class_for(environment["machine"]["gpu_name"]) if device == "cuda" else "cpu"
    compile_pairs = _compile_pairs(args, parser, device)
    return RunSettings(
        python=python,
        environment=environment,
        device=device,
        suite=args.suite or ("full" if device == "cuda" else "tiny"),
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


def run_planned_cases(plan, settings: RunSettings, args: argparse.Namespace, on_case=None) -> list[dict]:
    """Each case in turn, with the progress line; KeyboardInterrupt (Ctrl-C, or ``lifetime.Terminated``
    on SIGTERM/SIGHUP) passes through once the case in flight is killed.

    ``on_case(results_so_far)`` runs after every case (the partial ``--out`` document).
    """
    from runner.engine.executor import CaseExecutor
    from runner.engine.progress import Progress

    executor = CaseExecutor(python=settings.python, timeout_s=args.timeout, warm=not args.no_warm,
                            compile_pairs=settings.compile_pairs)
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


def _write_atomically(path: Path, document: dict) -> None:
    temporary = path.with_name(path.name + ".partial")
    temporary.write_text(json.dumps(document, indent=1) + "\n")
    os.replace(temporary, path)


def deliver_document(document: dict, out: Path | None, *, url: str | None = None, token: str | None = None) -> int:
    """Write the document to ``out``, or post it to ``url``, or store it with ``manage.py ingest``;
    on a storage failure, save it locally."""
    if out:
        _write_atomically(out, document)
        print(f"run document written to {out}")
        return 0
    from runner.delivery import deliver

    try:
        print(deliver(document, url=url, token=token))
    except Exception as exc:  # noqa: BLE001 (keep hours of measurements when the database is unreachable)
        saved = _save_unsent(document, document["run"]["id"])
        print(f"error: could not store the run ({type(exc).__name__}: {exc})\nthe run document is saved in {saved}", file=sys.stderr)
        return 1
    return 0


def command_run(args: argparse.Namespace, argv: Sequence[str], parser: argparse.ArgumentParser) -> int:
    from contract.document import InvalidDocument, require_validator
    from contract.planning import plan_cases
    from runner.report import build_document, now_iso, status_counts, summary_table

    require_validator()
    try:
        workloads = resolve_workloads(args.workloads, allow_import=True)
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
        size=settings.suite,
        repro_python=None if settings.python == sys.executable else args.python,
        repro_timeout_s=None if args.timeout == DEFAULT_TIMEOUT_S else args.timeout,
        import_allowed=True,
        overrides=settings.overrides,
    )
    for line in plan.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    if not plan.cases:
        parser.error("no case to run (every combination was skipped)")
    build = settings.environment["build"]
    print(
        f"ptbench: {len(plan.cases)} cases, suite {settings.suite}, torch {build['torch_version']} ({build['git_sha'][:12]}), "
        f"{settings.device}, machine class {settings.machine_class}",
        file=sys.stderr,
    )
    def document_for(results: list[dict]) -> dict:
        return build_document(
            suite=settings.suite,
            environment=settings.environment,
            machine_class=settings.machine_class,
            build_label=args.build_label,
            workloads=[w for _, w in workloads],
            results=results,
            started_at=started_at,
            finished_at=now_iso(),
            command=_command_line(argv),
            requested_by=_requested_by(),
        )

    run_id = None

    def write_partial(results: list[dict], total: int) -> None:
        # A run killed from outside (a CI or device time limit) keeps every finished case.
        nonlocal run_id
        document = document_for(results)
        run_id = run_id or document["run"]["id"]
        document["run"]["id"] = run_id
        if len(results) < total:
            document["run"]["notes"] = f"partial: {len(results)} of {total} cases (the run is still going or was stopped)"
        _write_atomically(args.out, document)

    try:
        results = run_planned_cases(plan, settings, args, on_case=write_partial if args.out else None)
    except KeyboardInterrupt as exc:
        kept = f"; the finished cases are in {args.out}" if args.out and args.out.exists() else ": nothing stored"
        print(f"\ninterrupted{kept}", file=sys.stderr)
        return _interrupted_status(exc)
    print(summary_table(results))
    print(f"\n{len(results)} cases: {status_counts(results)}")
    try:
        document = document_for(results)
        if run_id:
            document["run"]["id"] = run_id
    except InvalidDocument as exc:
        saved = _save_unsent({"errors": [str(e) for e in exc.errors], "environment": settings.environment, "results": results}, "invalid")
        print(f"error: {exc}\nthe results are saved in {saved}", file=sys.stderr)
        return 1
    return deliver_document(document, args.out, url=args.url, token=args.token)


def _interrupted_status(exc: KeyboardInterrupt) -> int:
    """128 + the signal that stopped the run, as a shell reports it (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + getattr(exc, "signum", 2)


def _requested_by() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        user = os.environ.get("USER", "unknown")
    return f"{user}@{socket.gethostname()}"


def _save_unsent(payload: dict, name: str) -> Path:
    """Write what could not be stored into the working directory, so that no run is lost."""
    path = Path.cwd() / f"ptbench-run-{name}.json"
    path.write_text(json.dumps(payload, indent=1) + "\n")
    return path


def catalog_entry(requested_name: str, workload) -> dict:
    """A workload's ``contract.catalog`` entry; ``source`` for one named ``module:Class``."""
    from contract.catalog import Entry

    return Entry(name=workload.name, category=workload.category, phase=workload.phase, dtypes=tuple(workload.dtypes),
                 dynamic_dims=tuple(str(d) for d in workload.dynamic_dims), description=workload.description,
                 source=requested_name if ":" in requested_name and not getattr(workload, "family", "") else "",
                 family=getattr(workload, "family", "")).to_json()


def command_list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from runner.report import format_table

    if args.family:
        from runner.families import list_family

        try:
            return list_family(args.family, as_json=args.json, names_only=args.names)
        except LookupError as exc:
            parser.error(f"--family: {exc.args[0]}")
    try:
        workloads = resolve_workloads(args.workloads, allow_import=True)
    except LookupError as exc:
        parser.error(str(exc))
    if args.json:
        print(json.dumps([catalog_entry(requested, w) for requested, w in workloads], indent=1))
        return 0
    rows = [
        (
            w.name,
            w.category or "-",
            ", ".join(str(d) for d in w.dynamic_dims) or "-",
            w.phase,
            ", ".join(w.dtypes),
        )
        for _, w in workloads
    ]
    print(format_table(("workload", "class", "dynamic dims", "train/infer", "dtypes"), rows))
    return 0


def command_case(args: argparse.Namespace) -> int:
    import faulthandler

    from runner.engine.executor import STACK_DUMP_SIGNAL

    # The parent sends this before killing a case that ran out of time: the stacks land in the log.
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=True, chain=False)
    from runner.engine.case import run_case
    from runner.engine.result_file import ResultFile
    from contract.spec import CaseSpec

    spec = CaseSpec.read(args.spec)
    if spec.timing_budget.host_probe:  # before torch starts its threads and compile workers
        from runner.engine.host_speed import reserve_probe_cpu

        reserve_probe_cpu()
    if spec.config_overrides:  # a build variant: before anything is compiled
        from runner.engine.overrides import apply_config

        apply_config(spec.config_overrides)
    run_case(spec, ResultFile(args.result))
    return 0


def command_environment(args: argparse.Namespace) -> int:
    from runner.engine.environment import collect_environment

    environment = collect_environment()
    if args.check_config:
        from runner.engine.overrides import check_config

        environment["override_problems"] = check_config(json.loads(args.check_config.read_text()))
    if args.catalog:
        from runner.engine.overrides import config_catalog

        environment["config_catalog"] = config_catalog()
    args.out.write_text(json.dumps(environment, indent=1))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ci"]:
        from runner.ci import main as ci_main

        return ci_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("case", "compile-once", "environment"):
        # A case process dies with the runner that started it, even after a kill -9 (its sentinel
        # takes its compile workers with it): docs/runner-processes.md.
        from runner.engine.lifetime import follow_parent

        follow_parent(sentinel=args.command != "environment")
    if args.command == "run":
        from runner.engine.lifetime import stop_on_signals

        stop_on_signals()  # SIGTERM, SIGHUP, SIGINT: the cases in flight are killed first
        try:
            return command_run(args, argv, parser)
        except KeyboardInterrupt as exc:  # before the cases started (the build's probe): nothing to keep
            print("\ninterrupted: nothing stored", file=sys.stderr)
            return _interrupted_status(exc)
    if args.command == "list":
        return command_list(args, parser)
    if args.command == "case":
        return command_case(args)
    if args.command == "compile-once":
        from runner.engine.compile_once import compile_once

        compile_once(args.spec, args.result)
        return 0
    return command_environment(args)
