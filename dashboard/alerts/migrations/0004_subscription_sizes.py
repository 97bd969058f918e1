"""``Subscription.suites`` is ``Subscription.sizes`` (issue #34): it always held runs' sizes (tiny,
full), which a run now calls its size; the values stay as they are."""
import dashboard.alerts.models
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("alerts", "0003_subscription_metrics_compile_phases")]

    operations = [
        migrations.RenameField(model_name="subscription", old_name="suites", new_name="sizes"),
        migrations.AlterField(
            model_name="subscription",
            name="sizes",
            field=models.JSONField(blank=True, default=list, help_text="only runs of these sizes, tiny or full (empty: all)",
                                   validators=[dashboard.alerts.models.validate_sizes]),
        ),
    ]
