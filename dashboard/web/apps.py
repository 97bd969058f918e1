from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "dashboard.web"
    label = "web"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_login_failed  # noqa: PLC0415 (apps are loaded now)

        from dashboard.throttle import on_logged_in, on_login_failed  # noqa: PLC0415

        user_login_failed.connect(on_login_failed, dispatch_uid="dashboard.throttle.failed")
        user_logged_in.connect(on_logged_in, dispatch_uid="dashboard.throttle.cleared")
