"""Admin: interpreters that hold builds (probed by the workers of their class, never in a web
request: issue #18), case tasks, and on *Builds*: requesting a run, creating a variant (issue #16)
and asking workers to probe a build."""
from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from contract.document import InvalidDocument
from dashboard.dispatch.forms import ProbeForm, RunRequestForm, VariantForm
from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.dispatch.services import (
    BaseNotProbed,
    MatrixError,
    build_probe_classes,
    build_probe_request,
    run_request,
    variant_overrides_validate,
)
from dashboard.results.admin import BuildAdmin
from dashboard.results.models import Build
from dashboard.results.selectors.common import build_ref
from dashboard.results.services import variant_get_or_create


@admin.register(BuildEnvironment)
class BuildEnvironmentAdmin(admin.ModelAdmin):
    list_display = ["build", "machine_class", "hostname", "worker", "python", "source", "reported_at"]
    list_filter = ["machine_class", "source"]
    search_fields = ["python", "hostname", "build__git_sha", "build__torch_version"]
    readonly_fields = ["build", "environment", "reported_at", "source", "worker"]
    actions = ["ask_workers"]

    @admin.action(description="Ask a worker of each selected class to probe and report its builds")
    def ask_workers(self, request, queryset):
        for machine_class in sorted({r.machine_class for r in queryset if r.machine_class}):
            build_probe_request(machine_class=machine_class)
            self.message_user(request, f"asked a worker of {machine_class} to report its builds")

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ProbeForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return super().get_fields(request, obj) if obj else ["machine_class", "python"]

    def save_model(self, request, obj, form, change):
        """Adding a row asks a worker of the class to probe the interpreter: its row (and build, with
        its config catalog) appears once the worker has reported it. Nothing is stored here."""
        if change:
            return super().save_model(request, obj, form, change)
        build_probe_request(machine_class=obj.machine_class, python=obj.python)
        return None

    def log_addition(self, request, obj, message):
        return None  # nothing was added: a probe was asked for

    def response_add(self, request, obj, post_url_continue=None):
        from django.http import HttpResponseRedirect

        self.message_user(request, f"asked a worker of {obj.machine_class} to probe {obj.python}: it is listed here once "
                          "the worker has reported it (add it to that machine's PTBENCH_BUILDS to keep it)")
        return HttpResponseRedirect(reverse("admin:dispatch_buildenvironment_changelist"))

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj else []


@admin.register(CaseTask)
class CaseTaskAdmin(admin.ModelAdmin):
    list_display = ["run", "workload", "config_key", "state", "attempts", "sends", "worker", "started_at", "finished_at"]
    list_filter = ["state", "run__machine__machine_class", "config_key"]
    search_fields = ["workload", "worker", "run__id"]
    readonly_fields = [f.name for f in CaseTask._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


def _intermediate(modeladmin, request, *, template: str, title: str, form, builds, action: str, **context):
    return TemplateResponse(request, template, {
        **modeladmin.admin_site.each_context(request), "title": title, "form": form, "builds": builds,
        "action": action, "opts": modeladmin.model._meta, **context,
    })


@admin.action(description="Request a run of the selected builds on a machine class")
def request_runs(modeladmin, request, queryset):
    form = RunRequestForm(request.POST if "apply" in request.POST else None)
    if "apply" in request.POST and form.is_valid():
        for build in queryset:
            try:
                run = run_request(build=build, machine_class=form.cleaned_data["machine_class"], size=form.cleaned_data["size"],
                                  requested_by=request.user.get_username(), **form.matrix())
            except MatrixError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
                break
            modeladmin.message_user(request, f"run {run.id}: {run.cases_expected} cases of {build} queued")
        else:
            return None
    return _intermediate(modeladmin, request, template="dispatch/request_run.html", title="Request a run", form=form,
                         builds=queryset, action="request_runs")


@admin.action(description="Create a variant of the selected build (config / env overrides)")
def create_variant(modeladmin, request, queryset):
    """One base build -> its variant: the overrides checked in form (``contract.variants``) and
    against the base build's torch (its config catalog); every error names the key, nothing is
    stored until all pass."""
    if queryset.count() != 1:
        modeladmin.message_user(request, "select exactly one build: the variant's base", messages.ERROR)
        return None
    base = queryset.get()
    form = VariantForm(request.POST if "apply" in request.POST else None)
    if "apply" in request.POST and form.is_valid():
        overrides = form.cleaned_data["overrides"]
        try:
            variant_overrides_validate(base=base, overrides=overrides)
            variant = variant_get_or_create(base=base, overrides=overrides)
        except InvalidDocument as exc:
            for error in exc.errors:
                form.add_error("config", f"{error.field}: {error.message}")
        except BaseNotProbed as exc:
            form.add_error("config", f"{exc.field}: {exc.message}")
        else:
            url = reverse("admin:results_build_change", args=[variant.pk])
            modeladmin.message_user(request, format_html("variant <a href=\"{}\">{}</a> of {}: {}", url, build_ref(variant),
                                                         build_ref(base), overrides.summary()))
            return None
    return _intermediate(modeladmin, request, template="dispatch/create_variant.html", title="Create a build variant",
                         form=form, builds=[base], action="create_variant")


@admin.action(description="Ask workers to probe the selected builds (torch, CUDA, config keys)")
def probe_builds(modeladmin, request, queryset):
    for build in queryset:
        classes = build_probe_classes(build=build)
        for machine_class in classes:
            build_probe_request(machine_class=machine_class)
        if classes:
            modeladmin.message_user(request, f"{build_ref(build)}: asked a worker of {', '.join(classes)} to probe it")
        else:
            modeladmin.message_user(request, f"{build_ref(build)}: no worker has reported it (start one with it in "
                                    "PTBENCH_BUILDS, or run manage.py register_build)", messages.WARNING)


# The results app's build admin (which knows nothing of dispatch), with the dispatch actions.
admin.site.unregister(Build)


@admin.register(Build)
class DispatchBuildAdmin(BuildAdmin):
    actions = [*(BuildAdmin.actions or []), request_runs, create_variant, probe_builds]
