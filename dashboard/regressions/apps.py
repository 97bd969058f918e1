from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "dashboard.regressions"
    label = "regressions"
    verbose_name = "Regressions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard.regressions.models import Regression, RegressionStatusChange  # noqa: PLC0415 (apps are loaded now)
        from dashboard.results.page_cache import fingerprint_columns_add  # noqa: PLC0415

        fingerprint_columns_add(Regression, "id")  # a new finding or triage step makes cached pages stale
        fingerprint_columns_add(RegressionStatusChange, "id")
