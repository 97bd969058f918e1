"""Admin: the intakes (issue #41, docs/builds.md), read-only, with an action asking the selected
intakes' classes to take in the newest build now. The schedule itself is a periodic task
(``pipeline.intake_request``) in *Periodic tasks* (django-celery-beat)."""
from django.contrib import admin

from dashboard.dispatch.models import Intake
from dashboard.pipeline.intake import intake_request


@admin.register(Intake)
class IntakeAdmin(admin.ModelAdmin):
    list_display = ["id", "machine_class", "state", "version", "build", "hostname", "requested_at", "finished_at", "seconds", "cached", "run"]
    list_filter = ["machine_class", "state"]
    search_fields = ["version", "hostname", "error"]
    readonly_fields = [f.name for f in Intake._meta.fields]
    actions = ["take_in_now"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Ask a worker of each selected class to take in the newest build now")
    def take_in_now(self, request, queryset):
        for machine_class in sorted({i.machine_class for i in queryset}):
            latest = queryset.filter(machine_class=machine_class).first()
            intake = intake_request(machine_class=machine_class, run_options=latest.run_options if latest else {}, requested_by="admin")
            self.message_user(request, f"asked a worker of {machine_class} to take in the newest build (intake {intake.id})")
