from django.apps import AppConfig


class DispatchConfig(AppConfig):
    name = "dashboard.dispatch"
    label = "dispatch"
    verbose_name = "Runs on workers"
    default_auto_field = "django.db.models.BigAutoField"
