"""Findings and re-measurements stored before ``results.same_build``: a last good and a first bad
build that are one commit with the same overrides stored twice (a quick start's local build and the
imported sample of it, issue #27 item 1) compared a build with itself. Detection no longer records
them; this removes those it recorded (docs/machine-classes-and-verdicts.md). Not reversible: they
were never findings."""
from django.db import migrations
from django.db.models import F



def forget(apps, schema_editor):
    Regression = apps.get_model("regressions", "Regression")
    Remeasurement = apps.get_model("regressions", "Remeasurement")
    regressions = Regression.objects.filter(
        first_bad_build__git_sha=F("last_good_build__git_sha"), first_bad_build__overrides={},
        last_good_build__overrides={}).exclude(first_bad_build__git_sha="unknown")
    Remeasurement.objects.filter(regression__in=regressions).update(regression=None)
    regressions.delete()
    Remeasurement.objects.filter(
        build__git_sha=F("baseline_build__git_sha"), build__overrides={}, baseline_build__overrides={}
    ).exclude(build__git_sha="unknown").delete()


class Migration(migrations.Migration):

    # The alerts app's deliveries name findings (a many-to-many): its tables must be known to delete them.
    dependencies = [("regressions", "0002_noise_band_sets"), ("alerts", "0001_initial")]

    operations = [migrations.RunPython(forget, migrations.RunPython.noop)]
