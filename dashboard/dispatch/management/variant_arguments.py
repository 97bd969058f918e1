"""``--config SECTION.KEY=VALUE`` and ``--env NAME=VALUE`` (repeatable) of the commands that make a
build variant (issue #16): the same flags as ``python -m runner run``."""
from django.core.management.base import CommandError

from contract.variants import InvalidOverride, Overrides


def add_override_arguments(parser, *, what: str) -> None:
    parser.add_argument("--config", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help=f"{what}: a compiler setting, e.g. inductor.coordinate_descent_tuning=true (repeatable)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help=f"{what}: an environment variable, TORCHINDUCTOR_*, TORCH_*, TRITON_* (repeatable); only "
                        "settings that are data (docs/variants-and-settings.md)")


def overrides_from(options) -> Overrides:
    """The overrides given, or exit 2 naming the bad one (before anything is probed or stored)."""
    try:
        return Overrides.from_cli(options["config"], options["env"])
    except InvalidOverride as exc:
        raise CommandError(str(exc), returncode=2) from None
