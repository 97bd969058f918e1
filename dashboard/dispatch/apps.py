from django.apps import AppConfig


class DispatchConfig(AppConfig):
    name = "dashboard.dispatch"
    label = "dispatch"
    verbose_name = "Runs on workers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard.dispatch.selectors_intake import intake_newest_rows  # noqa: PLC0415 (apps are loaded now)
        from dashboard.results.page_cache import fingerprint_part_add  # noqa: PLC0415

        fingerprint_part_add(intake_newest_rows)  # a new or answered intake shows on /
