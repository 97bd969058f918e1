"""The series whose detection failed in a pass over a run, kept on its alert summary: a failure was
only logged and the build's verdict still said pass (issue #34)."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("regressions", "0003_forget_same_build_findings")]

    operations = [
        migrations.AddField(
            model_name="alertsummary",
            name="detection_failures",
            field=models.JSONField(
                blank=True, default=list,
                help_text="series whose detection raised in the newest pass over this run: [{series, workload, config, "
                          "error}]; the run's verdict is an error while any is listed (docs/machine-classes-and-verdicts.md)",
            ),
        ),
    ]
