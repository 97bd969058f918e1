"""``manage.py request_run --build BUILD --size tiny|full [--suite hf] --machine-class CLASS``: queue a run's
cases for the runner workers of that class and print the run's id."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.dispatch.selectors import build_for_schedule, run_request_summary
from dashboard.dispatch.services import MatrixError, run_request
from dashboard.results.selectors.common import Ambiguous, NotFound
from contract.arguments import DIMS_HELP
from contract.arguments import dims as _dims
from contract.arguments import machine_class as _machine_class
from contract.arguments import name_list as _names
from contract.arguments import suite_name as _suite_name
from contract.vocabulary import BACKENDS, SIZES


class Command(BaseCommand):
    help = "Request a run of a build on a machine class; prints the run id (see run_status)."

    def add_arguments(self, parser):
        parser.add_argument("--build", required=True, help="a build ref (e.g. 70d99e998b49+cu130), or 'latest' reported by the class")
        parser.add_argument("--size", required=True, choices=SIZES, help="workload size: full (GPU) or tiny (CPU)")
        parser.add_argument("--suite", type=_suite_name, help="a suite's workloads (core, hf, timm, torchvision, dist, all), with any --workloads")
        parser.add_argument("--machine-class", required=True, type=_machine_class)
        parser.add_argument("--workloads", type=_names, help="comma-separated names or suites (core, hf, timm, torchvision, dist, all); default: the core suite")
        parser.add_argument("--modes", type=_names, help="default: all four on a GPU class, 'default' on cpu")
        parser.add_argument("--regimes", type=_names, help="default: static,backed,unbacked")
        parser.add_argument("--dtypes", type=_names, help="default: each workload's first dtype")
        parser.add_argument("--dims", type=_dims, help=DIMS_HELP)
        parser.add_argument("--timeout", type=float, help="seconds per case phase (default DISPATCH_CASE_TIMEOUT_S)")
        parser.add_argument("--backend", default="inductor", choices=BACKENDS, help="eager/aot_eager: exercise the workers without inductor")
        parser.add_argument("--notes", default="")
        parser.add_argument("--requested-by", default="manage.py request_run")

    def handle(self, *args, **options):
        try:
            build = build_for_schedule(ref=options["build"], machine_class=options["machine_class"])
        except (ValueError, NotFound, Ambiguous, LookupError) as exc:
            raise CommandError(f"--build {options['build']}: {exc}") from None
        try:
            run = run_request(
                build=build, machine_class=options["machine_class"], size=options["size"], suite=options["suite"],
                requested_by=options["requested_by"], workloads=options["workloads"], modes=options["modes"],
                regimes=options["regimes"], dtypes=options["dtypes"], timeout_s=options["timeout"], notes=options["notes"],
                backend=options["backend"], dims=options["dims"],
            )
        except MatrixError as exc:
            raise CommandError(f"--{exc.field.replace('_s', '')}: {exc.message}") from None
        self.stderr.write(run_request_summary(run=run, build=build))
        self.stdout.write(str(run.id))
