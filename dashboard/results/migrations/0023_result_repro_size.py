"""Stored repro commands say ``--size`` (issue #34): a result ingested from a document older than
the split of sizes from suites kept ``--suite tiny|full``, which today's runner refuses (exit 2);
ingest now rewrites it (``contract.planning.current_repro``), and this rewrites the stored ones."""
from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Replace

SIZES = ("tiny", "full")


def _repros(apps, old: str, new: str) -> None:
    Result = apps.get_model("results", "Result")
    for size in SIZES:
        Result.objects.filter(repro__contains=f"{old} {size} ").update(
            repro=Replace(F("repro"), Value(f"{old} {size} "), Value(f"{new} {size} ")))


def forwards(apps, schema_editor):
    _repros(apps, "--suite", "--size")


class Migration(migrations.Migration):
    dependencies = [("results", "0022_run_build_facts")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
