# The four columns give way to the key and tags; the backed-vs-unbacked summaries are keyed by the
# configurations they sum up (CaseConfig.pattern) and recomputed.
from types import SimpleNamespace

from django.db import migrations, models
from django.db.models.fields.json import KeyTextTransform


def refresh_summaries(apps, schema_editor):
    from dashboard.results.summaries import summaries_refresh_all

    names = ("Build", "Run", "Result", "BuildSummary", "ConfigSummary", "DynamicSummary", "Config", "Workload")
    summaries_refresh_all(models=SimpleNamespace(**{name: apps.get_model("results", name) for name in names}))


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0014_config_key_fill'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='config', name='config_unique'),
        migrations.AlterModelOptions(
            name='config',
            options={'ordering': [KeyTextTransform(axis, 'tags') for axis in ('device', 'dtype', 'compile_mode', 'shape_regime')] + ['key']},
        ),
        migrations.RemoveField(model_name='config', name='compile_mode'),
        migrations.RemoveField(model_name='config', name='shape_regime'),
        migrations.RemoveField(model_name='config', name='dtype'),
        migrations.RemoveField(model_name='config', name='device'),
        migrations.AlterField(
            model_name='config',
            name='key',
            field=models.CharField(help_text='contract.case_config.CaseConfig.key', max_length=200, unique=True),
        ),
        migrations.RemoveConstraint(model_name='dynamicsummary', name='dynamicsummary_unique'),
        migrations.RunSQL('DELETE FROM results_dynamicsummary', migrations.RunSQL.noop),
        migrations.RemoveField(model_name='dynamicsummary', name='compile_mode'),
        migrations.RemoveField(model_name='dynamicsummary', name='dtype'),
        migrations.AddConstraint(
            model_name='dynamicsummary',
            constraint=models.UniqueConstraint(fields=('build', 'machine_class', 'config_key'), name='dynamicsummary_unique_config'),
        ),
        migrations.RunPython(refresh_summaries, migrations.RunPython.noop),
    ]
