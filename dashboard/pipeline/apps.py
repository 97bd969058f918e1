from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "dashboard.pipeline"
    label = "pipeline"
    verbose_name = "Pipeline"

    def ready(self) -> None:
        from dashboard.dispatch.signals import run_finished  # noqa: PLC0415 (apps are loaded now)
        from dashboard.pipeline.services import on_run_finished  # noqa: PLC0415

        from dashboard.regressions.services.bisect_auto import on_commit_range_stored, on_culprit_pair_found  # noqa: PLC0415
        from dashboard.regressions.signals import commit_range_stored, culprit_pair_found  # noqa: PLC0415

        run_finished.connect(on_run_finished, dispatch_uid="pipeline.on_run_finished")
        commit_range_stored.connect(on_commit_range_stored, dispatch_uid="pipeline.on_commit_range_stored")
        culprit_pair_found.connect(on_culprit_pair_found, dispatch_uid="pipeline.on_culprit_pair_found")
