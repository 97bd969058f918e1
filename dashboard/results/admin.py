"""A usable admin: searchable, filterable, results shown read-only (they come from ingest only)."""
from django.contrib import admin

from contract.metrics import ADMIN as ADMIN_METRICS
from dashboard.results.models import Artifact, Build, Config, Machine, Result, Run, Series, Workload
from dashboard.results.variants import overrides_stored


@admin.register(Machine)
class MachineAdmin(admin.ModelAdmin):
    list_display = ["hostname", "machine_class", "gpu_name", "gpu_count", "driver_version", "cuda_version", "last_seen"]
    list_filter = ["machine_class", "gpu_name"]
    search_fields = ["hostname", "gpu_name", "cpu_model"]


@admin.register(Build)
class BuildAdmin(admin.ModelAdmin):
    list_display = ["__str__", "torch_version", "git_sha", "local_label", "variant_overrides", "ordered_at", "triton_version",
                    "cuda_version"]
    list_filter = ["torch_version", "cuda_version"]
    search_fields = ["git_sha", "label", "torch_version", "local_label"]
    date_hierarchy = "ordered_at"
    # A variant's overrides are part of its identity (its local_label derives from them): shown, not edited.
    readonly_fields = ["created_at", "variant_overrides"]
    exclude = ["overrides"]

    @admin.display(description="overrides")
    def variant_overrides(self, build) -> str:
        return overrides_stored(build).summary() or "–"


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "category", "phase", "dynamic_dims"]
    list_filter = ["category", "phase"]
    search_fields = ["name", "description"]


@admin.register(Config)
class ConfigAdmin(admin.ModelAdmin):
    # One identity (docs/case-config.md): the key, and the tags it stands for.
    list_display = ["key", "tags"]
    search_fields = ["key"]


@admin.register(Series)
class SeriesAdmin(admin.ModelAdmin):
    list_display = ["workload", "config", "machine_class", "signature"]
    list_filter = ["machine_class", "config"]
    search_fields = ["workload__name", "signature"]
    list_select_related = ["workload", "config"]


class ResultInline(admin.TabularInline):
    model = Result
    fields = ["workload", "config", "status", *ADMIN_METRICS]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "size", "build", "machine", "status", "synthetic", "started_at", "ingested_at"]
    list_filter = ["status", "size", "synthetic", "machine__machine_class"]
    search_fields = ["id", "build__git_sha", "build__label", "machine__hostname", "requested_by"]
    list_select_related = ["build", "machine"]
    readonly_fields = ["id", "ingested_at"]
    inlines = [ResultInline]


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["workload", "config", "status", *ADMIN_METRICS, "run"]
    list_filter = ["status", "config", "run__machine__machine_class"]
    search_fields = ["workload__name", "run__id", "build__git_sha"]
    list_select_related = ["workload", "config", "run"]
    raw_id_fields = ["run", "build", "series"]

    def get_readonly_fields(self, request, obj=None):
        # Results are measurements: they enter through the ingest service, never by hand.
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    """Stored case artifacts, read-only: they come from uploads, and go with ``manage.py
    prune_artifacts``, which deletes each file with its row (docs/artifacts.md)."""

    list_display = ["name", "size_bytes", "stored_at", "sha256"]
    search_fields = ["name", "sha256"]
    date_hierarchy = "stored_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
