# A case task names its configuration by its key (contract.case_config.CaseConfig.key), not four columns.
from django.db import migrations, models

AXES = ("compile_mode", "shape_regime", "dtype", "device")


def fill_keys(apps, schema_editor):
    CaseTask = apps.get_model("dispatch", "CaseTask")
    for case in CaseTask.objects.all():
        case.config_key = "/".join(getattr(case, axis) for axis in AXES)
        case.save(update_fields=["config_key"])


def fill_columns(apps, schema_editor):
    CaseTask = apps.get_model("dispatch", "CaseTask")
    for case in CaseTask.objects.all():
        for axis, value in zip(AXES, case.config_key.split("/")):
            setattr(case, axis, value)
        case.save(update_fields=list(AXES))


class Migration(migrations.Migration):

    dependencies = [
        ('dispatch', '0003_variants_interpreter_per_build'),
    ]

    operations = [
        migrations.AddField(
            model_name='casetask',
            name='config_key',
            field=models.CharField(default='', help_text='its configuration: contract.case_config.CaseConfig.key', max_length=200),
            preserve_default=False,
        ),
        migrations.RunPython(fill_keys, fill_columns),
    ]
