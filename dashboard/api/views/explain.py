from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from contract.metrics import BY_NAME
from dashboard.api.exceptions import FieldError
from dashboard.api.views.common import READ_ERRORS, ApiView
from dashboard.results.models import Result
from dashboard.results.selectors.common import build_ref
from dashboard.results.selectors.explain import NotTheSameCase, results_explain


def _side(result: Result) -> dict:
    return {"result_id": result.pk, "run_id": str(result.run_id), "build": build_ref(result.build),
            "torch_version": result.build.torch_version}


class ExplainView(ApiView):
    @extend_schema(
        operation_id="explain_retrieve",
        summary="What changed between two results of one case: compile phases, kernels, graph breaks, "
                "environments and the likeliest cause (docs/explain.md)",
        parameters=[OpenApiParameter("metric", str, description="the metric whose change to explain (default: the one that moved most)")],
        responses={200: OpenApiTypes.OBJECT, **READ_ERRORS}, tags=["results"])
    def get(self, request, before_id: int, after_id: int):
        metric = request.query_params.get("metric") or None
        if metric is not None and metric not in BY_NAME:
            raise FieldError("metric", f"{metric!r} is not a metric; known: {', '.join(BY_NAME)}", 400)
        try:
            explained = results_explain(before_id=before_id, after_id=after_id, metric=metric)
        except Result.DoesNotExist:
            raise FieldError("before_id", f"no result {before_id} or {after_id}", 404) from None
        except NotTheSameCase as problem:
            raise FieldError(problem.field + "_id", str(problem), 400) from None
        return Response({"before": _side(explained.before), "after": _side(explained.after),
                         "workload": explained.after.workload.name, "config": str(explained.after.config),
                         "metric": metric, **explained.report})
