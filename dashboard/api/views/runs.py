from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from dashboard.api import selectors, services
from dashboard.api.auth import actor, token_of
from dashboard.api.document_schema import RUN_DOCUMENT_SCHEMA
from dashboard.api.exceptions import FieldError
from dashboard.dispatch.services import MatrixError
from dashboard.api.serializers import (
    RunRequestSerializer,
    RunSerializer,
    SubmitOutcomeSerializer,
    SubmitQuerySerializer,
)
from dashboard.api.filters import RunFilter, resolve_build
from dashboard.api.views.common import READ_ERRORS, WRITE_ERRORS, ApiListView, ApiView, body, error, paged, query
from dashboard.results.models import Run
from dashboard.results.selectors.runs import run_progress

IDEMPOTENCY_HEADER = "Idempotency-Key"

RUN_ID = OpenApiParameter("run_id", str, OpenApiParameter.PATH, description="the run's id (a UUID)")


def _run(run_id) -> Run:
    try:
        return selectors.run_get(run_id=run_id)
    except Run.DoesNotExist:
        raise FieldError("run_id", f"no run {run_id}", 404) from None


def _with_progress(run: Run) -> Run:
    run.progress = run_progress(run=run)
    return run


class RunListView(ApiListView):
    filterset_class = RunFilter

    def get_queryset(self):
        return selectors.run_list()

    def get_serializer_class(self):
        return _RunsWithProgress

    @extend_schema(operation_id="runs_list", filters=True, summary="List runs, newest first",
                   responses={200: paged(RunSerializer), **READ_ERRORS}, tags=["runs"])
    def get(self, request):
        return self.list(request)

    @extend_schema(operation_id="runs_request", summary="Request a run of a build on a machine class",
                   description="Creates a pending run (the runners of the machine class pick it up). Its id is the "
                   "`run.id` the runner's document must carry when it is submitted.",
                   parameters=[OpenApiParameter(IDEMPOTENCY_HEADER, str, OpenApiParameter.HEADER, required=False,
                                                description="up to 100 printable characters: the same key from the same "
                                                "token answers the run it created (200) instead of a second one")],
                   request=RunRequestSerializer, responses={201: RunSerializer, 200: RunSerializer, **WRITE_ERRORS}, tags=["runs"])
    def post(self, request):
        key = request.headers.get(IDEMPOTENCY_HEADER, "")
        if len(key) > 100 or not key.isprintable():
            raise FieldError(IDEMPOTENCY_HEADER, "at most 100 printable characters")
        data = body(request, RunRequestSerializer).validated_data
        build = resolve_build("build", data.pop("build"))
        try:
            run, created = services.api_run_request(build=build, requested_by=actor(request), idempotency_key=key, token=token_of(request),
                                                **data)
        except MatrixError as exc:
            raise FieldError(exc.field, exc.message) from None
        return Response(RunSerializer(_with_progress(selectors.run_get(run_id=run.id)), context={"request": request}).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class _RunsWithProgress(RunSerializer):
    """A page of runs with their progress counted in one query."""

    @classmethod
    def many_init(cls, instance=None, *args, **kwargs):
        runs = selectors.runs_with_progress(runs=list(instance or []))
        return super().many_init(runs, *args, **kwargs)


class RunDetailView(ApiView):
    @extend_schema(operation_id="runs_retrieve", summary="A run's status and progress", parameters=[RUN_ID],
                   responses={200: RunSerializer, **READ_ERRORS}, tags=["runs"])
    def get(self, request, run_id):
        return Response(RunSerializer(_with_progress(_run(run_id)), context={"request": request}).data)


class RunCancelView(ApiView):
    @extend_schema(operation_id="runs_cancel", summary="Cancel a pending or running run", parameters=[RUN_ID], request=None,
                   responses={200: RunSerializer, 409: error("the run already finished"), **WRITE_ERRORS}, tags=["runs"])
    def post(self, request, run_id):
        _run(run_id)
        run = services.run_cancel(run_id=run_id, cancelled_by=actor(request), token=token_of(request))
        return Response(RunSerializer(_with_progress(selectors.run_get(run_id=run.id)), context={"request": request}).data)


class RunSubmitView(ApiView):
    """The body is read raw and handed to the ingest service: parsed once, validated once."""

    max_body_setting = "INGEST_MAX_DOCUMENT_BYTES"

    @extend_schema(
        operation_id="runs_submit", summary="Submit a run's results (a run document) through the ingest service",
        description="All or nothing: a bad document stores nothing and every bad field is named "
        "(e.g. `results[3].status`). Idempotent on `run.id`: posting a run again stores nothing twice, and a "
        "run posted in parts is completed. A run requested through `POST /runs/` is completed by the document "
        "that carries its id. Documents over INGEST_MAX_DOCUMENT_BYTES are refused with 413.",
        parameters=[SubmitQuerySerializer],
        request={"application/json": RUN_DOCUMENT_SCHEMA},
        responses={201: SubmitOutcomeSerializer, 200: SubmitOutcomeSerializer, **WRITE_ERRORS},
        examples=[OpenApiExample("outcome", response_only=True, value={
            "run_id": "6f1c1c9e-3a9e-4a44-9d53-2b3f2c1b8a10", "created": True, "results_created": 6, "results_skipped": 0})],
        tags=["runs"],
    )
    def post(self, request):
        options = query(request, SubmitQuerySerializer)
        content_type = request.content_type.split(";")[0].strip()
        if content_type != "application/json":
            raise FieldError("Content-Type", f"{content_type or '(none)'!r}: send the run document as application/json", 415)
        outcome, run = services.run_submit(body=request.body, submitted_by=actor(request), complete=options["complete"],
                                           token=token_of(request))
        data = {**outcome.as_dict(), "run": RunSerializer(_with_progress(run), context={"request": request}).data}
        return Response(data, status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK)
