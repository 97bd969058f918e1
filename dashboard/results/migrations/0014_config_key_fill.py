# Each stored configuration's key and tags from its four columns. The key is what
# contract.case_config.CaseConfig.key gives for them (written out here: a migration keeps the
# formula it ran with); series signatures are not touched.
from django.db import migrations

AXES = ("compile_mode", "shape_regime", "dtype", "device")


def fill_keys(apps, schema_editor):
    Config = apps.get_model("results", "Config")
    for config in Config.objects.all():
        config.tags = {axis: getattr(config, axis) for axis in AXES}
        config.key = "/".join(getattr(config, axis) for axis in AXES)
        config.save(update_fields=["key", "tags"])


def fill_columns(apps, schema_editor):
    Config = apps.get_model("results", "Config")
    for config in Config.objects.all():
        for axis in AXES:
            setattr(config, axis, config.tags[axis])
        config.save(update_fields=list(AXES))


class Migration(migrations.Migration):

    dependencies = [
        ('results', '0013_config_key_tags'),
    ]

    operations = [
        migrations.RunPython(fill_keys, fill_columns),
    ]
