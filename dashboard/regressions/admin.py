from django.contrib import admin

from dashboard.regressions.models import AlertSummary, Regression, RegressionStatusChange, Remeasurement


class StatusChangeInline(admin.TabularInline):
    model = RegressionStatusChange
    extra = 0
    can_delete = False
    readonly_fields = ["from_status", "to_status", "changed_by", "changed_at", "note"]


@admin.register(Regression)
class RegressionAdmin(admin.ModelAdmin):
    list_display = ["id", "series", "metric", "finding", "kind", "magnitude", "status", "first_bad_build", "created_at"]
    list_filter = ["status", "kind", "finding", "metric", "series__machine_class"]
    search_fields = ["series__workload__name", "metric", "note"]
    readonly_fields = [f.name for f in Regression._meta.fields if f.name not in ("status", "note")]
    inlines = [StatusChangeInline]

    def save_model(self, request, obj, form, change):
        # Status changes go through the triage service, so the history records them.
        from dashboard.regressions.services import regression_triage  # noqa: PLC0415

        if change and {"status", "note"} & set(form.changed_data):
            regression_triage(regression_ids=[obj.pk], status=obj.status, user=request.user.get_username(), note=obj.note)
        else:
            super().save_model(request, obj, form, change)


@admin.register(AlertSummary)
class AlertSummaryAdmin(admin.ModelAdmin):
    list_display = ["id", "build", "previous_build", "machine_class", "created_at", "notified_at"]
    list_filter = ["machine_class"]
    readonly_fields = ["run", "build", "previous_build", "machine_class", "created_at", "notified_at"]


@admin.register(Remeasurement)
class RemeasurementAdmin(admin.ModelAdmin):
    list_display = ["id", "series", "metric", "build", "baseline_build", "status", "requested_at", "decided_at"]
    list_filter = ["status", "metric"]
    readonly_fields = [f.name for f in Remeasurement._meta.fields]
