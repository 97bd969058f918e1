from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "dashboard.regressions"
    label = "regressions"
    verbose_name = "Regressions"
    default_auto_field = "django.db.models.BigAutoField"
