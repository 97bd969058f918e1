"""``manage.py register_build --python PATH``: describe the interpreter's torch and register its build."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.dispatch.management.variant_arguments import add_override_arguments, overrides_from
from dashboard.dispatch.services import build_register_local
from dashboard.results.selectors.common import build_ref
from contract.document import InvalidDocument
from runner.engine.executor import EnvironmentProbeFailed


class Command(BaseCommand):
    help = "Register the build an interpreter holds (torch version, git sha, triton, CUDA); prints its ref."

    def add_arguments(self, parser):
        parser.add_argument("--python", required=True, help="the build's interpreter, e.g. /opt/torch-2.12/bin/python")
        parser.add_argument("--machine-class", default="", help="the class whose workers have it at this path")
        parser.add_argument("--label", default="", help="name shown on pages (default: 'torch <version>')")
        parser.add_argument("--local-label", default=None, help="tell a patched build apart from its release")
        add_override_arguments(parser, what="a variant of the build")

    def handle(self, *args, **options):
        overrides = overrides_from(options)
        try:
            build, created = build_register_local(python=options["python"], machine_class=options["machine_class"],
                                                  label=options["label"], local_label=options["local_label"],
                                                  overrides=overrides)
        except EnvironmentProbeFailed as exc:
            raise CommandError(f"--python: {exc}") from None
        except InvalidDocument as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"{'registered' if created else 'already registered'}: torch {build.torch_version} "
                          f"({build.git_sha[:12]}), triton {build.triton_version or '-'}, CUDA {build.cuda_version or '-'}"
                          + (f", overrides {overrides.summary()}" if overrides else ""))
        self.stdout.write(build_ref(build))
