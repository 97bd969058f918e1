from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "dashboard.api"
    label = "api"
    verbose_name = "API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the OpenAPI description of our token authentication with drf-spectacular.
        from dashboard.api import openapi  # noqa: F401, PLC0415 (apps are loaded now)
