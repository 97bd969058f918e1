"""One page envelope for every list: ``{"count", "next", "previous", "results"}``.

``page`` (from 1) and ``page_size`` (1 to ``API_MAX_PAGE_SIZE``, default ``API_PAGE_SIZE``). A
page size over the limit or a page past the end is refused naming the parameter, not clamped.
"""
from __future__ import annotations

from django.conf import settings
from django.core.paginator import InvalidPage
from rest_framework.pagination import PageNumberPagination

from dashboard.api.exceptions import FieldError


class Pagination(PageNumberPagination):
    page_query_param = "page"
    page_size_query_param = "page_size"

    @property
    def page_size(self) -> int:  # read per request: tests and deployments change the settings
        return settings.API_PAGE_SIZE

    @property
    def max_page_size(self) -> int:
        return settings.API_MAX_PAGE_SIZE

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None or raw == "":
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            raise FieldError("page_size", f"{raw[:40]!r} is not an integer") from None
        if not 1 <= size <= self.max_page_size:
            raise FieldError("page_size", f"{size} is outside 1..{self.max_page_size} (the page size limit)")
        return size

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        page_size = self.get_page_size(request)
        paginator = self.django_paginator_class(queryset, page_size)
        raw = request.query_params.get(self.page_query_param) or "1"
        try:
            number = int(raw)
        except ValueError:
            raise FieldError("page", f"{raw[:40]!r} is not an integer") from None
        if number < 1:
            raise FieldError("page", "pages are numbered from 1")
        try:
            self.page = paginator.page(number)
        except InvalidPage:
            raise FieldError("page", f"page {number} is past the last page ({paginator.num_pages})", 404) from None
        return list(self.page)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == "page_size":
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": settings.API_MAX_PAGE_SIZE}
                parameter["description"] = f"results per page, 1 to {settings.API_MAX_PAGE_SIZE} (default {settings.API_PAGE_SIZE})"
            if parameter["name"] == "page":
                parameter["schema"] = {"type": "integer", "minimum": 1}
        return parameters
