"""``manage.py schedule_run --machine-class CLASS --size full [--suite hf] --hour 2``: a nightly run on Celery
beat (a django-celery-beat periodic task: edit or disable it in the admin)."""
import json

from django.core.management.base import BaseCommand
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from dashboard.dispatch.management.variant_arguments import add_override_arguments, overrides_from
from contract.arguments import DIMS_HELP
from contract.arguments import dims as _dims
from contract.arguments import machine_class as _machine_class
from contract.arguments import suite_name as _suite_name
from contract.vocabulary import SIZES


class Command(BaseCommand):
    help = "Create or update the nightly run of a machine class (Celery beat)."

    def add_arguments(self, parser):
        parser.add_argument("--machine-class", required=True, type=_machine_class)
        parser.add_argument("--size", default="full", choices=SIZES, help="workload size (default full)")
        parser.add_argument("--suite", type=_suite_name, help="a suite's workloads (core, hf, timm, torchvision, dist, all), with any --workloads")
        parser.add_argument("--build", default="latest", help="a build ref, or 'latest' reported by the class's workers")
        parser.add_argument("--hour", type=int, default=2, choices=range(24), metavar="0-23")
        parser.add_argument("--minute", type=int, default=0, choices=range(60), metavar="0-59")
        parser.add_argument("--timezone", default="UTC")
        parser.add_argument("--workloads", default="", help="comma-separated names or suites (core, hf, timm, torchvision, dist, all); default: the core suite")
        parser.add_argument("--dims", type=_dims, help=DIMS_HELP)
        add_override_arguments(parser, what="a nightly of the build's variant")

    def handle(self, *args, **o):
        overrides = overrides_from(o)
        schedule, _ = CrontabSchedule.objects.get_or_create(
            minute=str(o["minute"]), hour=str(o["hour"]), day_of_week="*", day_of_month="*", month_of_year="*", timezone=o["timezone"]
        )
        kwargs = {"build": o["build"], "machine_class": o["machine_class"], "size": o["size"]}
        if o["suite"]:
            kwargs["suite"] = o["suite"]
        if o["workloads"]:
            kwargs["workloads"] = [w.strip() for w in o["workloads"].split(",") if w.strip()]
        if o["dims"]:
            kwargs["dims"] = list(o["dims"])
        if overrides:
            kwargs.update(overrides.as_document())
        dims = f" dims={','.join(o['dims'])}" if o["dims"] else ""
        variant = f" variant {overrides.digest()} ({overrides.summary()})"[:120] if overrides else ""
        task, created = PeriodicTask.objects.update_or_create(
            name=f"nightly {o['size']}{' ' + o['suite'] if o['suite'] else ''}{dims} on {o['machine_class']}{variant}",
            defaults={"task": "dispatch.scheduled_run", "crontab": schedule, "interval": None, "kwargs": json.dumps(kwargs),
                      "enabled": True, "queue": "ingest"},
        )
        self.stdout.write(f"{'created' if created else 'updated'} periodic task {task.id}: {task.name} at {o['hour']:02d}:{o['minute']:02d} {o['timezone']}")
