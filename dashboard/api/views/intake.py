"""``GET /api/v1/intake/``: per machine class, the newest build its workers took in from their own
package index, when, and the newest intake's failure (issue #41, docs/builds.md). Read-only: what
to take in and from where is the workers' own configuration, never the API's."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from dashboard.api.views.common import READ_ERRORS, ApiView
from dashboard.dispatch.models import Intake
from dashboard.dispatch.selectors_intake import intake_per_class
from dashboard.results.selectors.common import build_ref


def _intake(intake: Intake | None, *, log: bool = False) -> dict | None:
    if intake is None:
        return None
    build = intake.build
    return {
        "id": intake.id, "state": intake.state, "version": intake.version, "requested_at": intake.requested_at,
        "finished_at": intake.finished_at, "hostname": intake.hostname, "seconds": intake.seconds, "cached": intake.cached,
        "build": None if build is None else {"ref": build_ref(build), "torch_version": build.torch_version, "git_sha": build.git_sha,
                                             "commit_time": build.commit_time},
        "run_id": str(intake.run_id) if intake.run_id else None, "error": intake.error,
        **({"log": intake.log[-4000:]} if log else {}),
    }


def _intake_schema(name: str, **extra):
    return inline_serializer(name, allow_null=True, fields={
        "id": serializers.IntegerField(), "state": serializers.ChoiceField(choices=Intake.State.choices),
        "version": serializers.CharField(), "requested_at": serializers.DateTimeField(),
        "finished_at": serializers.DateTimeField(allow_null=True), "hostname": serializers.CharField(),
        "seconds": serializers.FloatField(allow_null=True), "cached": serializers.BooleanField(allow_null=True),
        "build": serializers.DictField(allow_null=True, help_text="ref, torch_version, git_sha, commit_time"),
        "run_id": serializers.CharField(allow_null=True, help_text="the nightly run requested on the build"),
        "error": serializers.CharField(), **extra})


class IntakeView(ApiView):
    @extend_schema(operation_id="intake_list", summary="Per machine class: the newest build taken in, and any failure",
                   responses={200: inline_serializer("IntakePerClass", {"classes": serializers.ListField(child=inline_serializer(
                       "ClassIntake", {"machine_class": serializers.CharField(), "taken": _intake_schema("IntakeTaken"),
                                       "failure": _intake_schema("IntakeFailure", log=serializers.CharField(help_text="the installer's last 4,000 characters")),
                                       "latest_state": serializers.CharField()}))}), **READ_ERRORS},
                   tags=["builds"])
    def get(self, request):
        return Response({"classes": [{"machine_class": c.machine_class, "taken": _intake(c.taken), "failure": _intake(c.failure, log=True),
                                      "latest_state": c.latest.state} for c in intake_per_class()]})
