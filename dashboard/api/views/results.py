from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from dashboard.api import selectors
from dashboard.api.exceptions import FieldError
from dashboard.api.serializers import ResultDetailSerializer, ResultFilterSerializer, ResultSerializer
from dashboard.api.views.common import READ_ERRORS, ApiView, paged, query, resolve_build
from dashboard.results.models import Result


class ResultListView(ApiView):
    @extend_schema(operation_id="results_list", summary="List results (one per case and run), in the order stored",
                   parameters=[ResultFilterSerializer], responses={200: paged(ResultSerializer), **READ_ERRORS}, tags=["results"])
    def get(self, request):
        filters = query(request, ResultFilterSerializer)
        filters["build"] = resolve_build("build", filters.get("build"))
        return self.page(request, selectors.result_list(**filters), ResultSerializer)


class ResultDetailView(ApiView):
    @extend_schema(operation_id="results_retrieve", summary="One result, with its timing samples",
                   responses={200: ResultDetailSerializer, **READ_ERRORS}, tags=["results"])
    def get(self, request, result_id: int):
        try:
            result = selectors.result_get(result_id=result_id)
        except Result.DoesNotExist:
            raise FieldError("result_id", f"no result {result_id}", 404) from None
        return Response(ResultDetailSerializer(result).data)
