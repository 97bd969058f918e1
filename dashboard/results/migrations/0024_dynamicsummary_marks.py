# /dynamic/'s trends read each build's marks (a failed side, a gap's quiet word, backed on every dim)
# stored with its DynamicSummary instead of judging every pair of every build in range on each
# request (issue #46 item 13): the rows stored before are marked from their pairs here.
from django.db import migrations, models


def mark_summaries(apps, schema_editor):
    from dashboard.results.selectors.dynamic import pairs_marks

    summaries = apps.get_model("results", "DynamicSummary")
    batch = []
    for row in summaries.objects.only("id", "pairs").iterator(chunk_size=500):
        row.marks = pairs_marks(row.pairs or [])
        batch.append(row)
        if len(batch) == 500:
            summaries.objects.bulk_update(batch, ["marks"])
            batch = []
    summaries.objects.bulk_update(batch, ["marks"])


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0023_result_repro_size'),
    ]

    operations = [
        migrations.AddField(
            model_name='dynamicsummary',
            name='marks',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(mark_summaries, migrations.RunPython.noop),
    ]
