"""The stale-case sweep on Celery beat, every five minutes (editable in the admin)."""
from django.db import migrations

NAME = "dispatch: re-queue stale cases"


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=5, period="minutes")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={"task": "dispatch.requeue_stale_cases", "interval": every, "queue": "ingest"})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [("dispatch", "0001_initial"), ("django_celery_beat", "0019_alter_periodictasks_options")]
    operations = [migrations.RunPython(create, remove)]
