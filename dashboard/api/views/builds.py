from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from dashboard.api import selectors, services
from dashboard.api.filters import BuildFilter, resolve_build
from dashboard.api.serializers import BuildDetailSerializer, BuildRegisterSerializer, BuildSerializer
from dashboard.api.views.common import READ_ERRORS, WRITE_ERRORS, ApiListView, ApiView, body, error, paged
from dashboard.results.models import Build


class BuildListView(ApiListView):
    filterset_class = BuildFilter
    serializer_class = BuildSerializer

    def get_queryset(self):
        return selectors.build_list()

    @extend_schema(operation_id="builds_list", filters=True, summary="List builds, newest first",
                   responses={200: paged(BuildSerializer), **READ_ERRORS}, tags=["builds"])
    def get(self, request):
        return self.list(request)

    @extend_schema(operation_id="builds_register", summary="Register a build (idempotent on git_sha + local_label)",
                   description="201 when the build is new, 200 when it was already registered; 400 naming "
                   "`torch_version` when the sha is stored with another torch version. With `config`/`env`: a variant "
                   "of the build named by `git_sha` + `local_label` (its base); each config key is checked against the "
                   "base's torch (400 naming `config.SECTION.KEY`, nothing stored), 409 naming `config` when the base was "
                   "never probed (a probe is asked of its workers: send again once `probed` is true). A registered build posted "
                   "again with a different `label`, `triton_version`, `cuda_version` or `python_version` is 409 naming each "
                   "(a field left out is not compared; docs/api-limits.md).",
                   request=BuildRegisterSerializer,
                   responses={201: BuildDetailSerializer, 200: BuildDetailSerializer, 409: error("the base build was never probed, or the build is registered with other fields"), **WRITE_ERRORS}, tags=["builds"])
    def post(self, request):
        serializer = body(request, BuildRegisterSerializer)
        data, overrides = serializer.to_document_build()
        build, created = services.build_register(data=data, overrides=overrides)
        build = Build.objects.prefetch_related("summaries").get(pk=build.pk)
        return Response(BuildDetailSerializer(build).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class BuildDetailView(ApiView):
    @extend_schema(operation_id="builds_retrieve", summary="One build", responses={200: BuildDetailSerializer, **READ_ERRORS}, tags=["builds"])
    def get(self, request, ref):
        build = resolve_build("ref", ref)
        build = Build.objects.prefetch_related("summaries").get(pk=build.pk)
        return Response(BuildDetailSerializer(build).data)
