"""Errors as pages of the site, DEBUG on or off (issue #42 item 6)."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import Resolver404, resolve

from dashboard.middleware import is_api
from dashboard.web.views.errors import not_found, permission_denied


class SitePagesMiddleware:
    """A 404 or 403 outside /api/ is a page of the site (``dashboard.web.views.errors``), naming what
    was not found, even with DEBUG on: a mistyped workload URL never shows Django's DEBUG page (the
    quick start runs with DEBUG on). With DEBUG off Django's handlers (``dashboard.urls``) answer the
    same pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 404 and settings.DEBUG and not is_api(request) and _unrouted(request):
            return not_found(request)
        return response

    def process_exception(self, request, exception):
        if is_api(request) or not isinstance(exception, (Http404, PermissionDenied)):
            return None
        return (not_found if isinstance(exception, Http404) else permission_denied)(request, exception)


def _unrouted(request) -> bool:
    """No URL pattern answers the path (Django's DEBUG 404 page lists them all)."""
    try:
        resolve(request.path_info)
    except Resolver404:
        return True
    return False
