"""Requests the views never see, and faults no view should answer with a 500: a NUL character in the
path or a query parameter (PostgreSQL cannot compare text holding one) is a 400 naming it; the
database unreachable is a 503 with ``Retry-After``."""
from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.urls import reverse

from dashboard.throttle import client_ip, login_attempt

DATABASE_DOWN = (OperationalError, InterfaceError)
RETRY_AFTER_S = 30
DATABASE_DOWN_MESSAGE = "the database is unavailable; try again shortly"


def is_api(request) -> bool:
    return request.path.startswith("/api/")


def error(request, status: int, field: str | None, message: str, headers: dict | None = None) -> HttpResponse:
    """The API's error shape under /api/ (see dashboard.api.exceptions), plain text elsewhere."""
    if is_api(request):
        body = {"status": status, "detail": message, "errors": [{"field": field, "message": message}]}
        return JsonResponse(body, status=status, headers=headers)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8", headers=headers)


def nul_field(request) -> str | None:
    """The path, or the first query parameter, that holds a NUL character; None when none does."""
    if "\x00" in request.path:
        return "path"
    return next((key for key, values in request.GET.lists() if "\x00" in key or any("\x00" in v for v in values)), None)


class GuardMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (field := nul_field(request)) is not None:
            return error(request, 400, field, f"{field} contains a NUL character (U+0000)")
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_DOWN):
            return error(request, 503, None, DATABASE_DOWN_MESSAGE, headers={"Retry-After": str(RETRY_AFTER_S)})
        return None


class LoginThrottleMiddleware:
    """A sign-in (POST to the admin's login page) is counted before its password is checked; one
    past the limit for its address or user name is 429 with ``Retry-After`` (``dashboard.throttle``),
    the password not checked."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.path == reverse("admin:login"):
            wait = login_attempt(ip=client_ip(request), username=request.POST.get("username", ""))
            if wait is not None:
                return error(request, 429, "username", f"too many failed sign-ins; try again in {wait} s",
                             headers={"Retry-After": str(wait)})
        return self.get_response(request)

