"""Every error of the API is JSON naming the field at fault:

    {"status": 400, "detail": "<first message>",
     "errors": [{"field": "results[3].metrics.speedup", "message": "..."}]}

``field`` is a body path (``results[3].status``), a query or path parameter (``build``), a header
(``Authorization``, ``Content-Type``), ``body`` for the body as a whole, or null when no one field is
at fault (a method not allowed, a server error).
"""
from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from dashboard.api.services import Conflict
from dashboard.middleware import DATABASE_DOWN, DATABASE_DOWN_MESSAGE, RETRY_AFTER_S
from dashboard.results.selectors.common import Ambiguous, NotFound
from contract.document import InvalidDocument
from contract.values import ECHO_CHARS, clipped, printable

log = logging.getLogger(__name__)


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "request body too large"
    field = "body"


class FieldError(exceptions.APIException):
    """An error with a status of our choosing about one field (404 for a path parameter, 409...)."""

    def __init__(self, field: str | None, message: str, status_code: int = 400):
        super().__init__(message)
        self.status_code, self.field = status_code, field


def flatten(detail, prefix: str = "") -> list[dict]:
    """DRF's nested error details as a flat list of {field, message}: dict keys become ``a.b``,
    list positions ``[i]``; ``non_field_errors`` belong to the object itself."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            key = str(key)
            if key in ("non_field_errors", "__all__"):
                path = prefix
            else:
                path = f"{prefix}.{key}" if prefix else key
            out += flatten(value, path)
        return out
    if isinstance(detail, list):
        out = []
        for index, item in enumerate(detail):
            if isinstance(item, (dict, list)):  # errors of the index-th item of a list field
                out += flatten(item, f"{prefix}[{index}]")
            else:
                out.append({"field": prefix or None, "message": str(item)})
        return out
    return [{"field": prefix or None, "message": str(detail)}]


MAX_ERRORS = 100  # errors listed in one answer; the rest counted in one more (docs/api-limits.md)


def error_response(status_code: int, errors: list[dict], headers: dict | None = None) -> Response:
    errors = errors or [{"field": None, "message": "error"}]
    if len(errors) > MAX_ERRORS:
        errors = errors[:MAX_ERRORS] + [{"field": None, "message": f"{len(errors) - MAX_ERRORS} more errors left out"}]
    # A field or message quoting bad input (an env name with a lone surrogate) must still encode, and
    # quotes at most so much of it (a 2.5 MB body was echoed whole, issue #46).
    errors = [{"field": printable(clipped(e["field"])) if e["field"] else e["field"],
               "message": printable(clipped(e["message"], 4 * ECHO_CHARS))} for e in errors]
    return Response({"status": status_code, "detail": errors[0]["message"], "errors": errors}, status=status_code, headers=headers)


def exception_handler(exc, context):
    headers = {}
    if isinstance(exc, InvalidDocument):
        errors = [{"field": e.field or "body", "message": e.message} for e in exc.errors]
        too_large = any("the limit is" in e.message and e.field == "" for e in exc.errors)
        return error_response(413 if too_large else 400, errors)
    if isinstance(exc, Conflict):  # 409, or 403 for NotOwner (what another token created)
        return error_response(exc.status, [{"field": field, "message": message} for field, message in exc.errors])
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return error_response(400, flatten(detail))
    if isinstance(exc, (NotFound, Http404)):
        return error_response(404, [{"field": getattr(exc, "field", None), "message": str(exc) or "not found"}])
    if isinstance(exc, Ambiguous):
        return error_response(400, [{"field": None, "message": str(exc)}])
    if isinstance(exc, RequestDataTooBig):
        return error_response(413, [{"field": "body", "message": str(exc)}])
    if isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    if isinstance(exc, exceptions.APIException):
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        if isinstance(exc, exceptions.ValidationError):
            errors = flatten(exc.detail)
        elif isinstance(exc, exceptions.ParseError):
            errors = [{"field": "body", "message": str(exc.detail)}]
        elif isinstance(exc, exceptions.UnsupportedMediaType):
            errors = [{"field": "Content-Type", "message": f"{exc.detail} Send application/json."}]
        elif isinstance(exc, exceptions.NotAcceptable):
            errors = [{"field": "Accept", "message": str(exc.detail)}]
        elif isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed, exceptions.PermissionDenied)):
            errors = [{"field": "Authorization", "message": str(exc.detail)}]
        else:
            errors = [{"field": getattr(exc, "field", None), "message": str(exc.detail)}]
        return error_response(exc.status_code, errors, headers)
    if isinstance(exc, DATABASE_DOWN):
        log.warning("database unavailable: %s", exc)
        return error_response(503, [{"field": None, "message": DATABASE_DOWN_MESSAGE}],
                              {"Retry-After": str(RETRY_AFTER_S)})
    log.exception("API error in %s", context.get("view").__class__.__name__ if context.get("view") else "?")
    return error_response(500, [{"field": None, "message": "internal server error"}])
