"""Result.compile_reference: the reference each compile_cpu_ratio was measured against, back-filled
from the stored case environments (environment.compile_pairs.reference) with the function ingest
uses, so stored and newly ingested results name one reference alike."""

from django.db import migrations, models

from dashboard.results.compile_reference import compile_reference_of

BATCH = 2000


def backfill(apps, schema_editor):
    Result = apps.get_model("results", "Result")
    by_key: dict[str, list[int]] = {}
    rows = Result.objects.filter(environment__has_key="compile_pairs").values_list("id", "environment")
    for result_id, environment in rows.iterator(chunk_size=BATCH):
        key = compile_reference_of(environment)
        if key:
            by_key.setdefault(key, []).append(result_id)
    for key, ids in by_key.items():
        for start in range(0, len(ids), BATCH):
            Result.objects.filter(id__in=ids[start:start + BATCH]).update(compile_reference=key)


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0010_result_compile_cpu_ratio'),
    ]

    operations = [
        migrations.AddField(
            model_name='result',
            name='compile_reference',
            field=models.CharField(blank=True, default='', help_text="the compile_cpu_ratio's reference: torch@sha12 (dashboard.results.compile_reference)", max_length=100),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
