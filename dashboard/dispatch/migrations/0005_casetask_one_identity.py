from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dispatch', '0004_casetask_config_key'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='casetask', name='casetask_unique_case'),
        migrations.RemoveField(model_name='casetask', name='compile_mode'),
        migrations.RemoveField(model_name='casetask', name='shape_regime'),
        migrations.RemoveField(model_name='casetask', name='dtype'),
        migrations.RemoveField(model_name='casetask', name='device'),
        migrations.AddConstraint(
            model_name='casetask',
            constraint=models.UniqueConstraint(fields=('run', 'workload', 'config_key'), name='casetask_unique_case_config'),
        ),
    ]
