# Unbacked cases of some dims (dims=batch) without a backed case of those dims now pair with the
# workload's backed case on every dim (docs/families.md, "What the pages show"): the backed-vs-unbacked
# summaries are recomputed. No schema change.
from types import SimpleNamespace

from django.db import migrations


def refresh_summaries(apps, schema_editor):
    from dashboard.results.summaries import summaries_refresh_all

    names = ("Build", "Run", "Result", "BuildSummary", "ConfigSummary", "DynamicSummary", "Config", "Workload")
    summaries_refresh_all(models=SimpleNamespace(**{name: apps.get_model("results", name) for name in names}))


class Migration(migrations.Migration):

    dependencies = [
        ("results", "0020_configsummary_no_versus_previous"),
    ]

    operations = [
        migrations.RunPython(refresh_summaries, migrations.RunPython.noop),
    ]
