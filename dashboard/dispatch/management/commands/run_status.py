"""``manage.py run_status ID``: a run's progress (done / failed / pending) and, with --cases, each case."""
import uuid

from django.core.management.base import BaseCommand, CommandError

from dashboard.dispatch.selectors import run_case_progress, run_case_tasks
from dashboard.results.models import Run
from dashboard.results.selectors.runs import run_progress


class Command(BaseCommand):
    help = "Print a run's status and progress."

    def add_arguments(self, parser):
        parser.add_argument("run_id")
        parser.add_argument("--cases", action="store_true", help="one line per case")

    def handle(self, *args, run_id, cases, **options):
        try:
            run = Run.objects.select_related("build", "machine").get(pk=uuid.UUID(run_id))
        except (ValueError, Run.DoesNotExist):
            raise CommandError(f"no run {run_id}") from None
        stored = run_progress(run=run)
        dispatched = run_case_progress(run=run)
        self.stdout.write(f"run {run.id}: {run.status}  ({run.size} on {run.machine.machine_class}, build {run.build})")
        results = ", ".join(f"{status} {n}" for status, n in sorted(stored.by_status.items())) or "none yet"
        self.stdout.write(f"results stored: {stored.stored}/{run.cases_expected or '?'} ({results})")
        if dispatched:
            states = ", ".join(f"{state} {n}" for state, n in sorted(dispatched.by_state.items()))
            self.stdout.write(f"cases: {states}; workers: {', '.join(dispatched.workers) or 'none yet'}")
            if cases:
                for case in run_case_tasks(run=run):
                    outcome = case.result.status if case.result_id else (case.error.splitlines()[0] if case.error else "")
                    self.stdout.write(f"  {case.state:<9} {case.workload} {case.config_key}"
                                      f"  {case.worker or '-'}  attempts={case.attempts}  {outcome}")
