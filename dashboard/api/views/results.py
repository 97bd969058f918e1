from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from dashboard.api import selectors
from dashboard.api.exceptions import FieldError
from dashboard.api.filters import ResultFilter
from dashboard.api.serializers.results import ResultDetailSerializer, ResultSerializer
from dashboard.api.views.common import READ_ERRORS, ApiListView, ApiView, paged
from dashboard.results.models import Result


class ResultListView(ApiListView):
    filterset_class = ResultFilter
    serializer_class = ResultSerializer

    def get_queryset(self):
        return selectors.result_list()

    @extend_schema(operation_id="results_list", filters=True, summary="List results (one per case and run), in the order stored",
                   responses={200: paged(ResultSerializer), **READ_ERRORS}, tags=["results"])
    def get(self, request):
        return self.list(request)


class ResultDetailView(ApiView):
    @extend_schema(operation_id="results_retrieve", summary="One result, with its timing samples, environment and whole kernel profile",
                   responses={200: ResultDetailSerializer, **READ_ERRORS}, tags=["results"])
    def get(self, request, result_id: int):
        try:
            result = selectors.result_get(result_id=result_id)
        except Result.DoesNotExist:
            raise FieldError("result_id", f"no result {result_id}", 404) from None
        return Response(ResultDetailSerializer(result, context={"request": request}).data)
