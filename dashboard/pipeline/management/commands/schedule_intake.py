"""``manage.py schedule_intake --machine-class CLASS [--hour 1] [--size full --suite core]``: every day at
that hour, a worker of the class takes in the newest build from its own index and the class's nightly
run is requested on it (a django-celery-beat periodic task: edit or disable it in the admin).
``--now``: one intake now, besides."""
import json

from django.core.management.base import BaseCommand, CommandError
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from contract.arguments import DIMS_HELP
from contract.arguments import dims as _dims
from contract.arguments import machine_class as _machine_class
from contract.arguments import suite_name as _suite_name
from contract.vocabulary import SIZES
from dashboard.pipeline.intake import IntakeError, intake_request


class Command(BaseCommand):
    help = "Create or update the nightly intake of a machine class (Celery beat), or take one in now."

    def add_arguments(self, parser):
        parser.add_argument("--machine-class", required=True, type=_machine_class)
        parser.add_argument("--hour", type=int, default=1, choices=range(24), metavar="0-23")
        parser.add_argument("--minute", type=int, default=0, choices=range(60), metavar="0-59")
        parser.add_argument("--timezone", default="UTC")
        parser.add_argument("--size", default="full", choices=SIZES, help="the nightly run's workload size (default full)")
        parser.add_argument("--suite", type=_suite_name, help="the nightly run's suite")
        parser.add_argument("--workloads", default="", help="comma-separated names or suites; default: the core suite")
        parser.add_argument("--dims", type=_dims, help=DIMS_HELP)
        parser.add_argument("--now", action="store_true", help="also ask for one intake now")

    def handle(self, *args, **o):
        options = {"size": o["size"], **({"suite": o["suite"]} if o["suite"] else {})}
        if o["workloads"]:
            options["workloads"] = [w.strip() for w in o["workloads"].split(",") if w.strip()]
        if o["dims"]:
            options["dims"] = list(o["dims"])
        schedule, _ = CrontabSchedule.objects.get_or_create(
            minute=str(o["minute"]), hour=str(o["hour"]), day_of_week="*", day_of_month="*", month_of_year="*", timezone=o["timezone"])
        task, created = PeriodicTask.objects.update_or_create(
            name=f"intake on {o['machine_class']}",
            defaults={"task": "pipeline.intake_request", "crontab": schedule, "interval": None, "enabled": True, "queue": "ingest",
                      "kwargs": json.dumps({"machine_class": o["machine_class"], **options})})
        self.stdout.write(f"{'created' if created else 'updated'} periodic task {task.id}: {task.name} at "
                          f"{o['hour']:02d}:{o['minute']:02d} {o['timezone']}")
        if o["now"]:
            try:
                intake = intake_request(machine_class=o["machine_class"], run_options=options, requested_by="manage.py")
            except IntakeError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"intake {intake.id}: asked a worker of {o['machine_class']} to take in the newest build")
