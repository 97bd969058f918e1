"""``Run.reason`` (issue #34): why a run was measured. Runs stored before it are nightlies, but those
asked for by re-measurement (requested_by "re-measurement"), and requested runs (a matrix, or cases
expected from an outside runner)."""
from django.db import migrations, models


def backfill(apps, schema_editor):
    Run = apps.get_model("results", "Run")
    Run.objects.filter(requested_by="re-measurement").update(reason="remeasurement")
    Run.objects.exclude(requested_by="re-measurement").exclude(matrix={}).update(reason="requested")
    Run.objects.filter(matrix={}, cases_expected__isnull=False).exclude(requested_by="re-measurement").update(reason="requested")


class Migration(migrations.Migration):
    dependencies = [("results", "0011_result_compile_reference")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="reason",
            field=models.CharField(
                choices=[("nightly", "Nightly"), ("requested", "Requested"), ("remeasurement", "Remeasurement"),
                         ("bisection", "Bisection")],
                default="nightly", max_length=16,
                help_text="nightly (a run document's default), requested (the API's and CI's), remeasurement, bisection",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
