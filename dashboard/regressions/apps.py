from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "dashboard.regressions"
    label = "regressions"
    verbose_name = "Regressions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard.regressions.selectors import newest_rows  # noqa: PLC0415 (apps are loaded now)
        from dashboard.results.page_cache import fingerprint_part_add  # noqa: PLC0415

        fingerprint_part_add(newest_rows)  # a new finding or triage step makes cached pages stale
