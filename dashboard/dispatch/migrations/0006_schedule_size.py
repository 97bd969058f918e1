"""Schedules and queued cases say ``size`` (issue #34): a nightly's periodic task named its size
``suite`` in its kwargs (``{"suite": "full"}`` -> ``{"size": "full"}``; dispatch.scheduled_run still
reads a message sent before), and a queued case's repro command ``--suite tiny|full`` (-> ``--size``)."""
import json

from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Replace
from django.utils import timezone

TASK = "dispatch.scheduled_run"
SIZES = ("tiny", "full")


def _kwargs(apps, old: str, new: str) -> None:
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    changed = False
    for task in PeriodicTask.objects.filter(task=TASK):
        kwargs = json.loads(task.kwargs or "{}")
        if kwargs.get(old) in SIZES and new not in kwargs:
            kwargs[new] = kwargs.pop(old)
            task.kwargs = json.dumps(kwargs)
            task.save(update_fields=["kwargs"])
            changed = True
    if changed:  # a running beat reloads its schedule when this moves (django-celery-beat's PeriodicTasks)
        apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def _repros(apps, old: str, new: str) -> None:
    CaseTask = apps.get_model("dispatch", "CaseTask")
    for size in SIZES:
        CaseTask.objects.filter(repro__contains=f"{old} {size}").update(
            repro=Replace(F("repro"), Value(f"{old} {size}"), Value(f"{new} {size}")))


def forwards(apps, schema_editor):
    _kwargs(apps, "suite", "size")
    _repros(apps, "--suite", "--size")


def backwards(apps, schema_editor):
    _kwargs(apps, "size", "suite")
    _repros(apps, "--size", "--suite")


class Migration(migrations.Migration):
    dependencies = [("dispatch", "0005_casetask_one_identity"), ("django_celery_beat", "0019_alter_periodictasks_options")]

    operations = [migrations.RunPython(forwards, backwards)]
