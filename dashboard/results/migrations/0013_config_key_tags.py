# The configuration as one identity (docs/case-config.md): a unique key and its fields as tags.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0012_run_reason'),
    ]

    operations = [
        migrations.AddField(
            model_name='config',
            name='key',
            field=models.CharField(help_text='contract.case_config.CaseConfig.key', max_length=200, null=True),
        ),
        migrations.AddField(
            model_name='config',
            name='tags',
            field=models.JSONField(default=dict, help_text="the configuration's fields (CaseConfig.as_document)"),
        ),
        migrations.AddField(
            model_name='dynamicsummary',
            name='config_key',
            field=models.CharField(default='', max_length=200),
            preserve_default=False,
        ),
    ]
