"""The detection sweep on Celery beat, every two minutes (editable in the admin): runs stored and
never detected, alerts never planned or sent (``regressions.sweep``)."""
from django.db import migrations

NAME = "regressions: detect runs never detected"


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=2, period="minutes")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={"task": "regressions.sweep", "interval": every, "queue": "analysis"})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [("regressions", "0001_initial"), ("django_celery_beat", "0019_alter_periodictasks_options")]
    operations = [migrations.RunPython(create, remove)]
