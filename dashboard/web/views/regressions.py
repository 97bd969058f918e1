"""The regressions page: list and filter findings grouped per run, and triage them (signed-in users);
the findings and their triage are the regressions app's (its selectors and services)."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseForbidden, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse

from dashboard.regressions.selectors.commits import regression_commits
from dashboard.regressions.board import board_groups, board_order, board_table, remeasurements_shown
from dashboard.regressions.finding import finding_page
from dashboard.regressions.forms import BisectForm, TriageForm
from dashboard.regressions.models import Regression
from contract import colour_reasons
from dashboard.regressions.selectors import detection_failures_recent, regression_list, remeasurement_list_pending
from dashboard.regressions.selectors.bisect import bisection_busy, bisection_latest, bisection_view
from dashboard.regressions.services import regression_triage
from dashboard.regressions.services.bisect import BisectError, bisection_cancel, bisection_start
from dashboard.results.selectors.builds import machine_class_list
from dashboard.results.selectors.names import stored_workload_names
from dashboard.web import params
from dashboard.web.export import export_format, table_response
from dashboard.web.finding_chart import finding_chart

STATUS_FILTERS = ["open", "all", *Regression.Status.values]
KIND_FILTERS = ["regression", "improvement", "all"]
PAGE_SIZE = 100
EXPORT_LIMIT = 10_000
# Who may press "Bisect" and "Cancel": the model permissions of a bisection (a superuser has both);
# the API asks a write token instead (docs/bisect.md).
BISECT_PERMISSION = "regressions.add_bisection"
CANCEL_PERMISSION = "regressions.change_bisection"
# Who may triage from the page: the permission to change a finding (a superuser has it); being
# signed in is not enough (issue #46 item 4: staff without permissions set findings to wontfix and
# turned a failing gate to pass). The API asks a write token instead.
TRIAGE_PERMISSION = "regressions.change_regression"


@params.answers_bad_parameters
def regression_page(request):
    if request.method == "POST":
        return _triage(request)
    status = params.choice(request, "status", STATUS_FILTERS, "open")
    kind = params.choice(request, "kind", KIND_FILTERS, "regression")
    machine_class = params.choice(request, "machine", ["", *machine_class_list()], "")
    finding = params.choice(request, "finding", ["", *Regression.Finding.values], "")
    build = params.build(request, "build")
    workload = params.known_name(request, "workload", stored_workload_names(), "workload") or ""
    page_number = int(params.number(request, "page", 1, low=1, high=1_000_000, integer=True))
    fmt = export_format(request)
    rows = regression_list(
        status=None if status == "all" else status, kind=None if kind == "all" else kind,
        machine_class=machine_class or None, finding=finding or None, build=build, workload=workload or None,
    )
    if fmt != "html":  # every finding the filters keep, not one page
        groups = board_groups(board_order(rows)[:EXPORT_LIMIT])
        return table_response(fmt=fmt, filename="regressions", tables={"regressions": board_table(groups)})
    page = Paginator(board_order(rows), PAGE_SIZE).get_page(page_number)
    return render(request, "regressions/list.html", {
        "page": page, "groups": board_groups(page.object_list), "status": status, "kind": kind,
        "machine_class": machine_class, "finding": finding, "build": build, "workload": workload,
        "status_filters": STATUS_FILTERS, "kind_filters": KIND_FILTERS, "classes": machine_class_list(),
        "findings": Regression.Finding.choices, "statuses": Regression.Status.choices,
        "pending": remeasurements_shown(remeasurement_list_pending()[:50]), "form_errors": {},
        "waiting_reason": colour_reasons.not_finding(colour_reasons.WAITING),
        "detection_failed": detection_failures_recent(),
        "can_triage": request.user.has_perm(TRIAGE_PERMISSION), "triage_permission": TRIAGE_PERMISSION,
    })


def regression_detail_page(request, regression_id: int):
    """One finding: what its board row has (numbers, likeliest cause, "what changed", repro), its
    series' chart with the change marked, every reason and the whole error; its bisection
    (docs/bisect.md): the range, each build's role and values, the culprit once found; reloads while
    the bisection runs."""
    regression = regression_list().filter(pk=regression_id).first()
    if regression is None:
        raise Http404(f"no regression {regression_id}")
    bisection = bisection_latest(regression_id=regression.id)
    view = bisection_view(bisection=bisection) if bisection else None
    page = finding_page(regression)
    return render(request, "regressions/detail.html", {
        "r": regression, "finding": page, "row": page.row, "numbers": page.row.numbers,
        "trends": finding_chart(regression=regression, url_compare=reverse("web:compare")),
        "bisection": bisection, "view": view,
        "running": bool(bisection and bisection_busy(bisection=bisection)),
        "noise_text": f"{bisection.result['noise']:.1%}" if bisection and bisection.result.get("noise") else "",
        "culprit_commits": "...".join(sha[:12] for sha in regression.culprit_range.split("...")),
        "commits": regression_commits(regression),
        "can_bisect": request.user.has_perm(BISECT_PERMISSION), "triage_permission": TRIAGE_PERMISSION,
        "can_cancel": request.user.has_perm(CANCEL_PERMISSION), "default_attempts": settings.BISECT_ATTEMPTS,
    })


def regression_bisect(request, regression_id: int):
    """POST: the "Bisect" button; the same service and answers as ``POST /api/v1/regressions/<id>/bisect/``
    (docs/bisect.md): 400 naming the field, 409 naming ``status`` while one runs; nothing written then."""
    regression = _bisect_target(request, regression_id, BISECT_PERMISSION)
    if not isinstance(regression, Regression):
        return regression
    form = BisectForm(request.POST)
    if not form.is_valid():
        return _bad_bisect(request, regression, {field: "; ".join(errs) for field, errs in form.errors.items()}, 400)
    limits = {name: value for name, value in form.cleaned_data.items() if value is not None}
    try:
        bisection_start(regression=regression, requested_by=request.user.get_username(), **limits)
    except BisectError as exc:
        return _bad_bisect(request, regression, {exc.field: exc.message}, 409 if exc.field == "status" else 400)
    messages.success(request, f"bisection of regression {regression.id} started")
    return redirect("regressions:detail", regression_id=regression.id)


def regression_bisect_cancel(request, regression_id: int):
    """POST: the "Cancel" button while a bisection runs (as ``DELETE /api/v1/regressions/<id>/bisect/``)."""
    regression = _bisect_target(request, regression_id, CANCEL_PERMISSION)
    if not isinstance(regression, Regression):
        return regression
    found = bisection_latest(regression_id=regression.id)
    if found is None or found.status != found.Status.RUNNING:
        return _bad_bisect(request, regression, {"regression_id": f"regression {regression.id} has no running bisection"}, 409)
    bisection_cancel(bisection_id=found.id, cancelled_by=request.user.get_username())
    messages.success(request, f"bisection of regression {regression.id} cancelled")
    return redirect("regressions:detail", regression_id=regression.id)


def _bisect_target(request, regression_id: int, permission: str):
    """The regression a bisect button acts on, or the answer that refuses it (sign in, 403, 404, 405)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("regressions:detail", args=[regression_id]))
    if not request.user.has_perm(permission):
        return HttpResponseForbidden(f"bisecting needs the permission {permission}")
    regression = regression_list().filter(pk=regression_id).first()
    if regression is None:
        raise Http404(f"no regression {regression_id}")
    return regression


def _bad_bisect(request, regression, errors: dict, status: int):
    return render(request, "regressions/bisect_error.html", {"r": regression, "errors": errors}, status=status)


def _triage(request):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.has_perm(TRIAGE_PERMISSION):
        return _bad_triage(request, {"permission": f"triage needs the permission {TRIAGE_PERMISSION} (an admin grants it)"},
                           status=403)
    form = TriageForm(request.POST)
    if not form.is_valid():
        return _bad_triage(request, {field: "; ".join(errs) for field, errs in form.errors.items()})
    try:
        changed = regression_triage(
            regression_ids=form.cleaned_data["ids"], status=form.cleaned_data["status"],
            user=request.user.get_username(), note=form.cleaned_data["note"],
        )
    except ValidationError as exc:
        return _bad_triage(request, {field: "; ".join(errs) for field, errs in exc.message_dict.items()})
    messages.success(request, f"{changed} regression{'s' if changed != 1 else ''} set to {form.cleaned_data['status']}")
    return redirect(request.get_full_path())


def _bad_triage(request, errors: dict, *, status: int = 400):
    return render(request, "regressions/triage_error.html", {"errors": errors}, status=status)
