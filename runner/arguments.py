"""The arguments of ``python -m runner`` (``build_parser``): parsing only, no orchestration.

``ci``'s own arguments are ``runner.ci``'s; this parser lists it for ``--help``.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from contract.arguments import DIMS_HELP, dims
from contract.arguments import machine_class as _machine_class
from contract.arguments import name_list as _name_list
from contract.arguments import non_negative, suite_name as _suite_name
from contract.planning import DEFAULT_TIMEOUT_S
from contract.reasons import RUN_REASONS
from contract.vocabulary import BACKENDS, COMPILE_MODES, DEVICES, DTYPES, SHAPE_REGIMES, SIZES



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

    run = commands.add_parser("run", help="run workloads (the core suite by default) and store (or write) the run document")
    run.add_argument("--size", choices=SIZES, help="workload size: tiny (CPU, tests) or full (GPU); default tiny on cpu, full on cuda")
    run.add_argument("--suite", type=_suite_name, help="a suite's workloads (core, hf, timm, torchvision, all: docs/families.md), "
                                                      "with any --workloads; a size goes in --size")
    run.add_argument("--workloads", type=_name_list, help="comma-separated names (or package.module:Class); default: the core suite")
    run.add_argument("--modes", type=_choices_list(COMPILE_MODES, "compile mode"), help="default: the four torch.compile modes on cuda, 'default' on cpu; the compile paths (export, aot_inductor, cpp_wrapper, freezing) run when named (docs/compile-paths.md)")
    run.add_argument("--regimes", type=_choices_list(SHAPE_REGIMES, "shape regime"), default=list(SHAPE_REGIMES))
    run.add_argument("--dims", type=dims, help=DIMS_HELP)
    run.add_argument("--dtypes", type=_choices_list(DTYPES, "dtype"), help="default: each workload's first dtype; amp (autocast "
                                                                         "bfloat16) for training workloads only")
    run.add_argument("--device", choices=DEVICES, help="default: cuda when the build sees a GPU, else cpu")
    run.add_argument("--backend", choices=BACKENDS, default="inductor", help="eager/aot_eager exercise the engine without inductor")
    run.add_argument("--python", default=sys.executable, help="the build's interpreter (default: this one)")
    run.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT_S, help="seconds per case subprocess")
    run.add_argument("--no-warm", action="store_true", help="skip the warm-compile subprocess")
    run.add_argument("--machine-class", type=_machine_class, help="series grouping, e.g. gpu-h100 (default: from the GPU model, or cpu)")
    run.add_argument("--build-label", type=_build_label, help="human name of the build, e.g. 'nightly 2026-11-21'")
    run.add_argument("--reason", choices=RUN_REASONS,
                     help="why the run is measured (default: nightly); a remeasurement or bisection run raises no "
                          "finding and no alert, a bisection run is no point of its series (docs/architecture.md)")
    run.add_argument("--out", type=Path, help="write the run document here instead of storing it in the database")
    run.add_argument("--url", help="post the run document to the dashboard's API at this URL instead of manage.py ingest")
    run.add_argument("--token", default=os.environ.get("PTBENCH_API_TOKEN"), help="API token for --url (default $PTBENCH_API_TOKEN)")
    run.add_argument("--artifact-max-bytes", type=non_negative(int), metavar="N",
                     help="keep each case's TORCH_TRACE log, gzip, at most N bytes (default $PTBENCH_ARTIFACT_MAX_BYTES "
                          "or 4 MiB; 0 keeps none): beside --out in a directory named for the run, else uploaded or ingested "
                          "with the run (docs/artifacts.md)")
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

    warm = commands.add_parser("warm-server", help="(internal) a warm process that forks case processes (runner.engine.warm_start)")
    warm.add_argument("--socket", type=Path, required=True)

    environment = commands.add_parser("environment", help="(internal) describe this interpreter's build and machine")
    environment.add_argument("--out", type=Path, required=True)
    environment.add_argument("--check-config", type=Path, help="(internal) JSON {SECTION.KEY: value} to check against this torch")
    environment.add_argument("--catalog", action="store_true", help="(internal) add config_catalog: this torch's config keys and types")
    return parser
