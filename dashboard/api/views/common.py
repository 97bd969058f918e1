"""What every API view shares: the body-size limit, query validation, build references, the
documented error responses."""
from __future__ import annotations

import functools

from django.conf import settings
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboard.api.body import chunked_body_read
from dashboard.api.exceptions import PayloadTooLarge
from dashboard.api.pagination import Pagination
from dashboard.api.serializers import ErrorSerializer


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


READ_ERRORS = {400: error("a bad parameter (named in errors[].field)"), 401: error("a wrong, revoked or missing token"),
               404: error("the named thing (or page) does not exist")}
WRITE_ERRORS = {**READ_ERRORS, 403: error("a read-only token"), 413: error("the body is over the size limit"),
                411: error("a chunked body this server cannot read: send Content-Length"), 415: error("not application/json"),
                429: error("past one of the token's quotas (named in detail; docs/api-limits.md), with Retry-After where waiting helps")}


class ApiView(APIView):
    """Refuses bodies over ``max_body_setting`` bytes with 413 before reading them (a chunked body:
    while reading it, ``dashboard.api.body``); pages lists."""

    max_body_setting = "API_MAX_REQUEST_BYTES"

    def page(self, request, items, serializer_class, **extra) -> Response:
        paginator = Pagination()
        rows = paginator.paginate_queryset(items, request, view=self)
        response = paginator.get_paginated_response(serializer_class(rows, many=True, context={"request": request}).data)
        if extra:
            response.data = {**extra, **response.data}
        return response

    def initial(self, request, *args, **kwargs):
        limit = getattr(settings, self.max_body_setting)
        chunked_body_read(request._request, limit=limit)  # Transfer-Encoding: chunked: read it, or 411
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            raise PayloadTooLarge(f"the body is {length} bytes; the limit is {limit} bytes")
        super().initial(request, *args, **kwargs)


class ApiListView(ApiView, generics.GenericAPIView):
    """A list: ``get_queryset()`` filtered by ``filterset_class`` (django-filter, ``dashboard.api.filters``:
    a bad parameter is a 400 naming it; drf-spectacular documents them), then paged."""

    filter_backends = [DjangoFilterBackend]
    pagination_class = Pagination

    def list(self, request) -> Response:
        return self.page(request, self.filter_queryset(self.get_queryset()), self.get_serializer_class())


def query(request, serializer_class) -> dict:
    """The validated query parameters; a bad one raises 400 naming it."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def body(request, serializer_class) -> serializers.Serializer:
    """The body, validated: a serializer whose ``validated_data`` is ready."""
    if not isinstance(request.data, dict):
        raise serializers.ValidationError({"body": [f"expected a JSON object, got {type(request.data).__name__}"]})
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer


@functools.cache
def paged(item_serializer):
    """The documented page envelope of a list of ``item_serializer``."""
    name = item_serializer.__name__.removesuffix("Serializer")
    return type(f"Paginated{name}ListSerializer", (serializers.Serializer,), {
        "count": serializers.IntegerField(help_text="items over all pages"),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": item_serializer(many=True),
    })
