"""``Run.suite`` is ``Run.size`` (issue #34: suites are core, hf, timm, torchvision, all; a run's
tiny / full is its size). Stored commands spelled the size ``--suite tiny|full``: the repro commands
of results and the command lines of runs now say ``--size`` (runner run and manage.py request_run
refuse a size given as --suite)."""
from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Replace

OLD, NEW = "--suite {size}", "--size {size}"
SIZES = ("tiny", "full")


def respell(model, field: str, *, old: str, new: str) -> None:
    for size in SIZES:
        model.objects.filter(**{f"{field}__contains": old.format(size=size)}).update(
            **{field: Replace(F(field), Value(old.format(size=size)), Value(new.format(size=size)))})


def forwards(apps, schema_editor):
    respell(apps.get_model("results", "Result"), "repro", old=OLD, new=NEW)
    respell(apps.get_model("results", "Run"), "command", old=OLD, new=NEW)


def backwards(apps, schema_editor):
    respell(apps.get_model("results", "Result"), "repro", old=NEW, new=OLD)
    respell(apps.get_model("results", "Run"), "command", old=NEW, new=OLD)


class Migration(migrations.Migration):
    dependencies = [("results", "0018_result_explain")]

    operations = [
        migrations.RenameField(model_name="run", old_name="suite", new_name="size"),
        migrations.RunPython(forwards, backwards),
    ]
