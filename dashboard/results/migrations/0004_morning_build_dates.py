"""Re-date the stored builds by dashboard/results/build_dates.py (they were dated by ingest time
when the document had no commit time), then refresh the summaries, which copy the date and pair
each build with the one before it."""
from types import SimpleNamespace

from django.db import migrations


def redate_builds(apps, schema_editor):
    from dashboard.results.build_dates import build_time
    from dashboard.results.summaries import summaries_refresh_all

    Build = apps.get_model("results", "Build")
    Run = apps.get_model("results", "Run")
    changed = []
    for build in Build.objects.all():
        first = Run.objects.filter(build=build, started_at__isnull=False).order_by("started_at").values_list("started_at", flat=True).first()
        at = build_time(torch_version=build.torch_version, commit_time=build.commit_time, first_run_started=first)
        if at is not None and at != build.ordered_at:
            build.ordered_at = at
            changed.append(build)
    Build.objects.bulk_update(changed, ["ordered_at"], batch_size=500)
    if changed:
        names = ("Build", "Run", "Result", "BuildSummary", "ConfigSummary")
        summaries_refresh_all(models=SimpleNamespace(**{name: apps.get_model("results", name) for name in names}))


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0003_run_matrix'),
    ]

    operations = [
        migrations.RunPython(redate_builds, migrations.RunPython.noop),
    ]
