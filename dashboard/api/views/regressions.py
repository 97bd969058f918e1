"""Regressions and the verdict: thin views over ``dashboard.regressions`` (its selectors, triage and
bisection services)."""
from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from dashboard.api.auth import actor, token_of
from dashboard.api.exceptions import FieldError
from dashboard.api.quotas import bisections_check, token_lock
from dashboard.api.serializers import (
    BisectionSerializer,
    BisectRequestSerializer,
    BulkTriageSerializer,
    RegressionSerializer,
    TriageOutcomeSerializer,
    TriageSerializer,
    VerdictQuerySerializer,
    VerdictSerializer,
)
from dashboard.api.filters import RegressionFilter, resolve_build
from dashboard.api.views.common import READ_ERRORS, WRITE_ERRORS, ApiListView, ApiView, body, paged, query
from dashboard.api.views.compare import machine_class_for
from dashboard.regressions import selectors
from dashboard.regressions.selectors import bisect as selectors_bisect
from dashboard.regressions.selectors.commits import verdict_culprits
from dashboard.regressions.services import bisect
from dashboard.regressions.services.triage import regression_triage
from dashboard.results.selectors.common import build_ref


class RegressionListView(ApiListView):
    filterset_class = RegressionFilter
    serializer_class = RegressionSerializer

    def get_queryset(self):
        return selectors.regression_list()

    @extend_schema(operation_id="regressions_list", filters=True, summary="List detected regressions (and improvements), newest first",
                   responses={200: paged(RegressionSerializer), **READ_ERRORS}, tags=["regressions"])
    def get(self, request):
        return self.list(request)

def _one(selectors, regression_id: int):
    found = selectors.regression_list().filter(pk=regression_id).first()
    if found is None:
        raise FieldError("regression_id", f"no regression {regression_id}", 404)
    return found

class RegressionDetailView(ApiView):
    @extend_schema(operation_id="regressions_retrieve", summary="One regression",
                   parameters=[OpenApiParameter("regression_id", int, OpenApiParameter.PATH)],
                   responses={200: RegressionSerializer, **READ_ERRORS}, tags=["regressions"])
    def get(self, request, regression_id: int):
        return Response(RegressionSerializer(_one(selectors, regression_id), context={"request": request}).data)

    @extend_schema(operation_id="regressions_triage", summary="Triage one regression (token)",
                   parameters=[OpenApiParameter("regression_id", int, OpenApiParameter.PATH)],
                   request=TriageSerializer, responses={200: RegressionSerializer, **WRITE_ERRORS}, tags=["regressions"])
    def patch(self, request, regression_id: int):
        data = body(request, TriageSerializer).validated_data
        _one(selectors, regression_id)
        regression_triage(regression_ids=[regression_id], status=data["status"], user=actor(request), note=data["note"])
        return Response(RegressionSerializer(_one(selectors, regression_id), context={"request": request}).data)

class RegressionTriageView(ApiView):
    @extend_schema(operation_id="regressions_triage_many", summary="Triage several regressions at once (token)",
                   description="All or nothing: an unknown id changes none of them.",
                   request=BulkTriageSerializer, responses={200: TriageOutcomeSerializer, **WRITE_ERRORS}, tags=["regressions"])
    def post(self, request):
        data = body(request, BulkTriageSerializer).validated_data
        updated = regression_triage(regression_ids=data["regression_ids"], status=data["status"], user=actor(request), note=data["note"])
        return Response({"updated": updated})

class VerdictView(ApiView):
    @extend_schema(
        operation_id="verdict", summary="Did this build regress? pass / regressed / suspect / pending / not_compared / error, with the list and a reason",
        description="Against the previous build on the same machine class, or a named `baseline`. `suspect`: moved, "
        "not yet confirmed (each entry says what would confirm it); `pending`: no results or detection has not run. "
        "`reason` is machine-readable: no_regressions, regressions_found, suspects_found, no_baseline, no_results, "
        "detection_pending; `error`: detection_failed (detection raised on some series of the build, named in "
        "`message`: they were not judged); `not_compared`: same_build (the baseline is this build: the same commit and overrides, "
        "e.g. a local measurement and an imported sample of it) or not_tracked (a variant whose base build has no "
        "results on the class; a variant is judged against its base build, detection never tracks it: its reasons are "
        "base_no_change, base_regressed, base_suspect, never a detection pass's); `message` "
        "says what was compared with what. With `fail_on_regression=true` a regressed build is answered 409 (same "
        "body), so `curl --fail` gates on it; `fail_on_suspect=true` does the same for a suspect one; with either, a "
        "pending, not_compared or error verdict is 409 too (no answer is not a pass).",
        parameters=[VerdictQuerySerializer],
        responses={200: VerdictSerializer, 409: VerdictSerializer, **READ_ERRORS}, tags=["verdict"],
    )
    def get(self, request):
        q = query(request, VerdictQuerySerializer)
        build = resolve_build("build", q["build"])
        baseline = resolve_build("baseline", q.get("baseline"))
        machine_class = machine_class_for(build, q.get("machine_class"))
        verdict = selectors.build_verdict(build=build, machine_class=machine_class, baseline=baseline)
        data = {
            "verdict": verdict.verdict, "reason": verdict.reason, "message": verdict.message, "build": build_ref(verdict.build),
            "baseline": build_ref(verdict.baseline) if verdict.baseline else None, "machine_class": verdict.machine_class,
            "regressions": VerdictSerializer().fields["regressions"].to_representation(verdict.regressions),
            "notes": VerdictSerializer().fields["notes"].to_representation(verdict.notes),
            "culprits": verdict_culprits([r.get("id") for r in verdict.regressions]),
        }
        gating = q["fail_on_regression"] or q["fail_on_suspect"]
        failed = (verdict.verdict == "regressed" and q["fail_on_regression"]) or (
            verdict.verdict == "suspect" and q["fail_on_suspect"]) or (verdict.verdict in ("pending", "not_compared", "error") and gating)
        return Response(data, status=409 if failed else 200)


class RegressionBisectView(ApiView):
    """docs/bisect.md: start, read or cancel the bisection of one regression."""

    @extend_schema(operation_id="regressions_bisect_retrieve", summary="The regression's latest bisection",
                   parameters=[OpenApiParameter("regression_id", int, OpenApiParameter.PATH)],
                   responses={200: BisectionSerializer, **READ_ERRORS}, tags=["regressions"])
    def get(self, request, regression_id: int):
        _one(selectors, regression_id)
        found = selectors_bisect.bisection_latest(regression_id=regression_id)
        if found is None:
            raise FieldError("regression_id", f"regression {regression_id} was never bisected", 404)
        return Response(selectors_bisect.bisection_data(bisection=found))

    @extend_schema(operation_id="regressions_bisect", summary="Bisect one regression (token)",
                   description="Runs the case on builds between its last good and first bad build that workers of its "
                   "class know (or over its first bad build's overrides), through the class's queue, until the first "
                   "bad build is found. 400 names the field that stops it (no build between: `last_good_build`); 409 "
                   "while one is running (`status`).",
                   parameters=[OpenApiParameter("regression_id", int, OpenApiParameter.PATH)],
                   request=BisectRequestSerializer, responses={201: BisectionSerializer, **WRITE_ERRORS}, tags=["regressions"])
    def post(self, request, regression_id: int):
        data = body(request, BisectRequestSerializer).validated_data
        regression = _one(selectors, regression_id)
        try:
            with transaction.atomic():
                token_lock(token_of(request))
                bisections_check(requested_by=actor(request))  # 429 past API_TOKEN_MAX_BISECTIONS (issue #46)
                bisection = bisect.bisection_start(regression=regression, requested_by=actor(request), **data)
        except bisect.BisectError as exc:
            raise FieldError(exc.field, exc.message, 409 if exc.field == "status" else 400) from None
        return Response(selectors_bisect.bisection_data(bisection=bisection), status=201)

    @extend_schema(operation_id="regressions_bisect_cancel", summary="Cancel the regression's running bisection (token)",
                   parameters=[OpenApiParameter("regression_id", int, OpenApiParameter.PATH)],
                   request=None, responses={200: BisectionSerializer, **WRITE_ERRORS}, tags=["regressions"])
    def delete(self, request, regression_id: int):
        _one(selectors, regression_id)
        found = selectors_bisect.bisection_latest(regression_id=regression_id)
        if found is None or found.status != found.Status.RUNNING:
            raise FieldError("regression_id", f"regression {regression_id} has no running bisection", 409)
        if found.requested_by != actor(request):  # issue #46 item 6: a token cancels only what it started
            raise FieldError("regression_id", f"the bisection of regression {regression_id} was started by "
                             f"{found.requested_by or 'the dashboard'}: only the token that started it may cancel it", 403)
        bisection = bisect.bisection_cancel(bisection_id=found.id, cancelled_by=actor(request))
        return Response(selectors_bisect.bisection_data(bisection=bisection))
