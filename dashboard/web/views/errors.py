"""Error answers as pages of the site (issue #42 item 6): 400, 403, 404 and 500 in the site's layout,
naming what was not found; a 404 of our views is this page even with DEBUG on (the quick start's
default; ``dashboard.middleware.SitePagesMiddleware``). Under /api/ errors stay JSON (``dashboard.api``)."""
from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

HEADINGS = {400: "Bad request", 403: "Not allowed", 404: "Page not found", 500: "Server error"}
ADVICE = {
    400: "The request could not be read: check the address and its parameters.",
    403: "Your account may not do this: an administrator can grant it in the admin.",
    404: "Nothing is at this address: pick a page below, or a workload from the overview.",
    500: "The server failed to answer; the error is in its log. Try again shortly.",
}


def error_context(status: int, message: str = "") -> dict:
    return {"status": status, "heading": HEADINGS[status], "advice": ADVICE[status], "message": message}


def error_page(request, status: int, message: str = "") -> HttpResponse:
    return render(request, "web/error.html", error_context(status, message), status=status)


def _said(exception) -> str:
    """The exception's own words when it has some (``Http404("no workload 'x'; did you mean ...")``)."""
    said = exception.args[0] if exception is not None and exception.args else ""
    return said if isinstance(said, str) else ""


def not_found(request, exception=None):
    """A view's own words (``Http404("no regression 7")``); an address no URL answers: says so."""
    return error_page(request, 404, _said(exception) or f"no page at {request.path[:200]}")


def bad_request(request, exception=None):
    return error_page(request, 400)  # a SuspiciousOperation's words (a bad Host header) are not repeated


def permission_denied(request, exception=None):
    return error_page(request, 403, _said(exception))


def server_error(request):
    # no context processors, no database: whatever failed must not fail the error page too
    return HttpResponse(render_to_string("web/error.html", error_context(500)), status=500)
