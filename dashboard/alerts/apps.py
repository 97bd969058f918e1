from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "dashboard.alerts"
    label = "alerts"
    verbose_name = "Alerts"
    default_auto_field = "django.db.models.BigAutoField"
