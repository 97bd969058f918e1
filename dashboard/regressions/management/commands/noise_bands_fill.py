"""Store /compare/'s noise bands of every build that has none, at once: ``manage.py noise_bands_fill
[--budget-s SECONDS]`` (what the beat sweep does NOISE_BANDS_SWEEP_BUDGET_S at a time; after an
upgrade or a bulk import, so every compare reads stored bands from the start)."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.regressions.services.noise_bands import noise_bands_fill


class Command(BaseCommand):
    help = "Store the noise bands of every build that has none, newest first (all of them, or for --budget-s seconds)."

    def add_arguments(self, parser):
        parser.add_argument("--budget-s", type=float, default=float("inf"), help="stop after this many seconds (default: when done)")

    def handle(self, *args, budget_s, **options):
        if not budget_s > 0:
            raise CommandError(f"--budget-s: a number of seconds above 0, not {budget_s}")
        outcome = noise_bands_fill(budget_s=budget_s)
        self.stdout.write(f"{outcome['computed']} build(s) given their noise bands; {outcome['missing']} still without")
