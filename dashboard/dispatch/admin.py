"""Admin: interpreters that hold builds (register / ask workers), case tasks, and requesting a run
of a build from the Builds list (action with a form)."""
from django.contrib import admin, messages
from django.template.response import TemplateResponse

from dashboard.dispatch.forms import RunRequestForm
from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.dispatch.services import MatrixError, build_register_local, run_request
from dashboard.results.models import Build
from contract.document import InvalidDocument
from runner.engine.executor import EnvironmentProbeFailed


@admin.register(BuildEnvironment)
class BuildEnvironmentAdmin(admin.ModelAdmin):
    list_display = ["build", "machine_class", "hostname", "worker", "python", "source", "reported_at"]
    list_filter = ["machine_class", "source"]
    search_fields = ["python", "hostname", "build__git_sha", "build__torch_version"]
    readonly_fields = ["build", "environment", "reported_at", "source", "worker"]
    actions = ["register_builds", "ask_workers"]

    @admin.action(description="Probe these interpreters here and register their builds")
    def register_builds(self, request, queryset):
        for row in queryset:
            try:
                build, created = build_register_local(python=row.python, machine_class=row.machine_class, hostname=row.hostname)
            except (EnvironmentProbeFailed, InvalidDocument) as exc:
                self.message_user(request, f"{row.python}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{row.python}: {'registered' if created else 'already registered'} {build}")

    @admin.action(description="Ask a worker of each selected class to probe and report its builds")
    def ask_workers(self, request, queryset):
        from kombu import Queue

        from dashboard.celery import app
        from contract.messages import PROBE_BUILDS

        for machine_class in sorted({r.machine_class for r in queryset if r.machine_class}):
            app.send_task(PROBE_BUILDS, queue=Queue(machine_class))
            self.message_user(request, f"asked a worker of {machine_class} to report its builds")

    def save_model(self, request, obj, form, change):
        """Adding a row by hand registers the interpreter: its build comes from probing it here."""
        try:
            build, _ = build_register_local(python=obj.python, machine_class=obj.machine_class, hostname=obj.hostname)
        except (EnvironmentProbeFailed, InvalidDocument) as exc:
            self.message_user(request, f"{obj.python}: {exc}", messages.ERROR)
            return
        obj.pk = BuildEnvironment.objects.get(machine_class=obj.machine_class, hostname=obj.hostname, python=obj.python,
                                              build=build).pk

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj else ["environment", "reported_at", "source", "worker", "build"]

    def get_exclude(self, request, obj=None):
        return None if obj else ["build", "environment", "reported_at", "source", "worker"]


@admin.register(CaseTask)
class CaseTaskAdmin(admin.ModelAdmin):
    list_display = ["run", "workload", "compile_mode", "shape_regime", "dtype", "device", "state", "attempts", "sends", "worker", "started_at", "finished_at"]
    list_filter = ["state", "run__machine__machine_class", "compile_mode", "shape_regime"]
    search_fields = ["workload", "worker", "run__id"]
    readonly_fields = [f.name for f in CaseTask._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.action(description="Request a run of the selected builds on a machine class")
def request_runs(modeladmin, request, queryset):
    form = RunRequestForm(request.POST if "apply" in request.POST else None)
    if "apply" in request.POST and form.is_valid():
        for build in queryset:
            try:
                run = run_request(build=build, machine_class=form.cleaned_data["machine_class"], suite=form.cleaned_data["suite"],
                                  requested_by=request.user.get_username(), **form.matrix())
            except MatrixError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
                break
            modeladmin.message_user(request, f"run {run.id}: {run.cases_expected} cases of {build} queued")
        else:
            return None
    return TemplateResponse(request, "dispatch/request_run.html", {
        **modeladmin.admin_site.each_context(request), "title": "Request a run", "form": form, "builds": queryset,
        "action": "request_runs", "opts": modeladmin.model._meta,
    })


admin.site._registry[Build].actions = [*(admin.site._registry[Build].actions or []), request_runs]
