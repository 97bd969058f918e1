from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "dashboard.pipeline"
    label = "pipeline"
    verbose_name = "Pipeline"

    def ready(self) -> None:
        from dashboard.dispatch.signals import run_finished  # noqa: PLC0415 (apps are loaded now)
        from dashboard.pipeline.services import on_run_finished  # noqa: PLC0415

        run_finished.connect(on_run_finished, dispatch_uid="pipeline.on_run_finished")
