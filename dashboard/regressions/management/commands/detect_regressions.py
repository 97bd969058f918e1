"""Run detection over stored runs: ``manage.py detect_regressions [RUN_ID ...] [--all]``."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.regressions.services import detection_run
from dashboard.results.models import Run


class Command(BaseCommand):
    help = "Detect regressions in the given runs (or every run, oldest build first, with --all)."

    def add_arguments(self, parser):
        parser.add_argument("run_ids", nargs="*")
        parser.add_argument("--all", action="store_true", help="every stored run, in build order")

    def handle(self, *args, run_ids, all, **options):
        if all:
            runs = Run.objects.order_by("build__ordered_at", "ingested_at").values_list("id", flat=True)
        elif run_ids:
            runs = run_ids
        else:
            raise CommandError("give run ids or --all")
        for run_id in runs:
            try:
                outcome = detection_run(run_id=run_id)
            except (Run.DoesNotExist, ValueError) as exc:
                raise CommandError(f"run {run_id}: {exc}") from exc
            self.stdout.write(f"{run_id}: {outcome.series_checked} series, {len(outcome.created)} new findings, "
                              f"{len(outcome.remeasurements)} re-measurements requested")
