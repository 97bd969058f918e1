"""Each run's stored results counted on the run (issue #46 item 13: the home page's recent runs read
them instead of counting per request; ``dashboard.results.run_counts``), counted here for the runs
stored before."""
from types import SimpleNamespace

from django.db import migrations, models


def count_results(apps, schema_editor):
    from dashboard.results.run_counts import run_counts_recount  # noqa: PLC0415

    run_counts_recount(models=SimpleNamespace(Run=apps.get_model("results", "Run"), Result=apps.get_model("results", "Result")))


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0024_dynamicsummary_marks'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='graph_break_total',
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='run',
            name='pass_count',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='run',
            name='result_count',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(count_results, migrations.RunPython.noop),
    ]
