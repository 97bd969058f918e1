from __future__ import annotations

from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from dashboard.api.views.common import ApiView


class ApiRootView(ApiView):
    @extend_schema(operation_id="api_root", summary="Where things are",
                   responses={200: inline_serializer("ApiRoot", {k: serializers.CharField() for k in (
                       "schema", "docs", "builds", "intake", "runs", "results", "series", "regressions", "compare", "verdict")})},
                   tags=["meta"])
    def get(self, request):
        names = {"schema": "schema", "docs": "docs", "builds": "builds", "intake": "intake", "runs": "runs", "results": "results",
                 "series": "series", "regressions": "regressions", "compare": "compare", "verdict": "verdict"}
        return Response({key: request.build_absolute_uri(reverse(f"api:{name}")) for key, name in names.items()})


@csrf_exempt  # a JSON 404 for every method (no CSRF page: the API uses no cookies)
def not_found(request, rest: str = ""):
    """Anything else under /api/v1/: JSON, like every other answer of the API."""
    hint = " (API paths end with '/')" if not request.path.endswith("/") else ""
    message = f"no API endpoint {request.path}{hint}; the list is at /api/v1/docs/"
    return JsonResponse({"status": 404, "detail": message, "errors": [{"field": "path", "message": message}]}, status=404)
