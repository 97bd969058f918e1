from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "dashboard.web"
    label = "web"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in  # noqa: PLC0415 (apps are loaded now)

        from dashboard.throttle import on_logged_in  # noqa: PLC0415

        user_logged_in.connect(on_logged_in, dispatch_uid="dashboard.throttle.cleared")
