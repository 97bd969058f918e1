"""``PUT /api/v1/artifacts/<sha256>/?name=N``: a runner worker's upload of a case's kept artifact
(its TORCH_TRACE log, gzip), stored by sha256 (docs/artifacts.md). The body is the file itself;
all or nothing: bytes that are not the announced sha256 leave nothing behind."""
from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from contract.artifacts import CONTENT_TYPE, name_error, sha256_error
from dashboard.api.exceptions import FieldError
from dashboard.api.views.common import WRITE_ERRORS, ApiView
from dashboard.api.auth import token_of
from dashboard.api.services import artifact_upload
from dashboard.results.artifacts import ArtifactRefused, gzip_problem

ACCEPTED_TYPES = (CONTENT_TYPE, "application/octet-stream")
GZIP_MAGIC = b"\x1f\x8b"


class ArtifactSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    name = serializers.CharField()
    size_bytes = serializers.IntegerField()
    created = serializers.BooleanField(help_text="false: these bytes were stored already")
    download = serializers.CharField(help_text="the dashboard's download address")


class ArtifactUploadView(ApiView):
    max_body_setting = "ARTIFACT_MAX_BYTES"

    @extend_schema(
        operation_id="artifacts_upload", summary="Upload a case's artifact (gzip), addressed by its sha256",
        description="The body is the gzip file (application/octet-stream or application/gzip). It is stored only when its sha256 is the one in the "
        "address; uploading the same bytes again stores nothing twice. Bodies over ARTIFACT_MAX_BYTES are refused "
        "with 413. Uploads no result references yet are bounded per token (ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN) and store-wide "
        "(ARTIFACT_UNREFERENCED_MAX_BYTES): 429 naming the setting past either. Results reference it by sha256 (`results[i].artifact` in the run document).",
        parameters=[OpenApiParameter("sha256", str, OpenApiParameter.PATH, description="the file's sha256 (64 hex digits)"),
                    OpenApiParameter("name", str, OpenApiParameter.QUERY, required=True,
                                     description="the file name a download gets: letters, digits, '.', '_', '-'")],
        # Documented as octet-stream (what generic clients send bytes as); application/gzip is taken too.
        request={"application/octet-stream": {"type": "string", "format": "binary"}},
        responses={201: ArtifactSerializer, 200: ArtifactSerializer, **WRITE_ERRORS},
        tags=["artifacts"],
    )
    def put(self, request, sha256: str):
        if problem := sha256_error(sha256):
            raise FieldError("sha256", problem)
        name = request.query_params.get("name")
        if problem := name_error(name):
            raise FieldError("name", problem)
        content_type = request.content_type.split(";")[0].strip()
        if content_type not in ACCEPTED_TYPES:
            raise FieldError("Content-Type", f"{content_type or '(none)'!r}: send the file as {CONTENT_TYPE}", 415)
        raw = request.body
        if not raw.startswith(GZIP_MAGIC):
            raise FieldError("body", "not a gzip file (artifacts are stored compressed)")
        if problem := gzip_problem(raw, max_expanded=settings.ARTIFACT_MAX_EXPANDED_BYTES, max_ratio=settings.ARTIFACT_MAX_RATIO):
            raise FieldError("body", problem, 413 if "bomb" in problem else 400)
        try:
            artifact, created = artifact_upload(raw=raw, sha256=sha256, name=name, token=token_of(request))
        except ArtifactRefused as exc:
            raise FieldError(exc.field, str(exc), 413 if exc.field == "body" else 400) from None
        data = {"sha256": artifact.pk, "name": artifact.name, "size_bytes": artifact.size_bytes, "created": created,
                "download": reverse("web:artifact", args=[artifact.pk])}
        return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
