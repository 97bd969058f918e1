from django.apps import AppConfig


class DispatchConfig(AppConfig):
    name = "dashboard.dispatch"
    label = "dispatch"
    verbose_name = "Runs on workers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard.dispatch.models import Intake  # noqa: PLC0415 (apps are loaded now)
        from dashboard.results.page_cache import fingerprint_columns_add  # noqa: PLC0415

        fingerprint_columns_add(Intake, "id", "finished_at")  # a new or answered intake shows on /
