"""``manage.py bisect REGRESSION_ID``: bisect a regression (docs/bisect.md); ``--cancel`` stops its
running bisection, ``--show`` prints its latest. Bad input exits 2 naming the option."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.regressions.models import Regression
from dashboard.regressions.selectors.bisect import bisection_latest, bisection_view
from dashboard.regressions.services.bisect import BisectError, bisection_cancel, bisection_start

_OPTION = {"last_good_build": "REGRESSION_ID", "first_bad_build": "REGRESSION_ID", "metric": "REGRESSION_ID",
           "status": "REGRESSION_ID"}


class Command(BaseCommand):
    help = "Bisect a regression between its last good and first bad build (or over its first bad build's overrides)."

    def add_arguments(self, parser):
        parser.add_argument("regression_id", type=int)
        parser.add_argument("--kind", default="builds", choices=["builds", "overrides", "commits"])
        parser.add_argument("--attempts", type=int, help="runs per build before deciding (default PTBENCH_BISECT_ATTEMPTS)")
        parser.add_argument("--max-attempts", type=int, help="runs per build at most")
        parser.add_argument("--max-steps", type=int, help="midpoints decided at most")
        parser.add_argument("--max-runs", type=int, help="cases requested at most")
        parser.add_argument("--cancel", action="store_true", help="cancel its running bisection")
        parser.add_argument("--show", action="store_true", help="print its latest bisection")

    def handle(self, *args, **options):
        regression = Regression.objects.filter(pk=options["regression_id"]).select_related("series").first()
        if regression is None:
            raise CommandError(f"REGRESSION_ID: no regression {options['regression_id']}", returncode=2)
        for name in ("attempts", "max_attempts", "max_steps", "max_runs"):
            if options[name] is not None and options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')}: must be at least 1", returncode=2)
        if options["show"] or options["cancel"]:
            bisection = bisection_latest(regression_id=regression.id)
            if bisection is None:
                raise CommandError(f"REGRESSION_ID: regression {regression.id} was never bisected", returncode=2)
            if options["cancel"]:
                bisection = bisection_cancel(bisection_id=bisection.id, cancelled_by="manage.py bisect")
            return self._print(bisection)
        try:
            bisection = bisection_start(regression=regression, requested_by="manage.py bisect", kind=options["kind"],
                                        attempts=options["attempts"], max_attempts=options["max_attempts"],
                                        max_steps=options["max_steps"], max_runs=options["max_runs"])
        except BisectError as exc:
            option = _OPTION.get(exc.field, f"--{exc.field.replace('_', '-')}")
            raise CommandError(f"{option}: {exc.field}: {exc.message}", returncode=2) from None
        self._print(bisection)

    def _print(self, bisection) -> None:
        view = bisection_view(bisection=bisection)
        self.stdout.write(f"bisection {bisection.id}: {bisection.status}, {len(view.rows)} builds, {view.runs} runs "
                          f"({view.open_runs} open, {view.lost} lost)")
        for row in view.rows:
            values = "/".join(f"{v:.4g}" for v in row.values) or "-"
            self.stdout.write(f"  {row.index + 1:>3} {row.ref:<40} {row.role:<12} {values} {row.override}".rstrip())
        if message := bisection.result.get("message"):
            self.stdout.write(message)
