"""Regressions, triage, the verdict and bisection: a finding with its numbers (contract.findings), a
triage, the verdict of a build, a bisection requested and as it stands."""
from __future__ import annotations

from rest_framework import serializers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from contract.facts import FindingDetails
from dashboard.regressions.board import regression_numbers
from dashboard.regressions.selectors.commits import regression_commits
from dashboard.results.selectors.common import build_ref
from dashboard.api.serializers.common import BUILD_REF_HELP, Strict, StrictCharField, WhoField, build_ref_field, machine_class_field
from dashboard.api.serializers.series import SeriesSerializer


REGRESSION_STATUSES = ["untriaged", "acknowledged", "investigating", "invalid", "fixed", "wontfix"]
REGRESSION_STATUS_FILTERS = ["open", "all", *REGRESSION_STATUSES]  # the board's own values (/regressions/?status=all)
REGRESSION_FINDINGS = ["change_point", "started_failing", "status_changed", "new_graph_break", "more_graph_breaks",
                       "new_recompile_reason", "more_recompiles", "dynamic_gap"]


REGRESSION_KINDS = ["regression", "improvement"]  # named in the OpenAPI schema (settings ENUM_NAME_OVERRIDES)
REGRESSION_KIND_FILTERS = [*REGRESSION_KINDS, "all"]
BISECTION_KINDS = ["builds", "overrides", "commits"]  # a regression's builds, a variant's overrides, or commits (docs/bisect.md, docs/builds.md)


# --- regressions and the verdict -------------------------------------------------------------------
class FindingNumbersFields(serializers.Serializer):
    """A finding's numbers, computed once (``contract.findings``; docs/noise-and-findings.md): the
    page, this API, ``runner ci``, the CSV and the alerts show the same."""

    before = serializers.JSONField(allow_null=True, help_text="in the metric's units; dynamic_gap: the ratio unbacked/backed; "
                                   "a status change: the status")
    after = serializers.JSONField(allow_null=True, help_text="as before")
    change = serializers.FloatField(allow_null=True, help_text="after / before - 1 of the values shown (+0.05: grew 5 %)")
    direction = serializers.ChoiceField(choices=["worse", "better", "too noisy to track", "new reason"],
                                        help_text="worse or better for the metric; too noisy to track: the series' "
                                                  "run-to-run sd is past the bound; new reason: a new graph-break or "
                                                  "recompile reason at the same count (fewer breaks is better)")
    reason = StrictCharField(allow_blank=True, help_text="a new graph-break or recompile reason's finding: the first line "
                             "of its (first) new reason, as change_text names it; else empty")
    noise = serializers.FloatField(allow_null=True, help_text="relative run-to-run sd the change was judged against")
    confidence = serializers.FloatField(allow_null=True, help_text="1 - p; 1.0 for a deterministic finding")
    certain = serializers.BooleanField(help_text="deterministic (a status, a count, a reason, a ratio past its threshold)")
    change_text = StrictCharField(allow_blank=True, help_text='e.g. "+274.4 % worse"')
    confidence_text = StrictCharField(allow_blank=True, help_text='"certain", "0.999" or ""')
    text = StrictCharField(allow_blank=True, help_text="the whole line as every surface prints it")


class RegressionSerializer(FindingNumbersFields):
    """A detected change (``dashboard.regressions.models.Regression``)."""

    id = serializers.IntegerField()
    series = SeriesSerializer()
    metric = StrictCharField()
    finding = serializers.ChoiceField(choices=REGRESSION_FINDINGS)
    kind = serializers.ChoiceField(choices=REGRESSION_KINDS)
    cause = serializers.SerializerMethodField(help_text="the likeliest cause: the compile phase, kernel or graph break that "
                                              "accounts for most of the change (kind, name, share, text, before_result, "
                                              "after_result; GET /api/v1/explain/<before_result>/<after_result>/ for the rest), "
                                              "or null (docs/explain.md)")
    first_bad_build = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    last_good_build = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    magnitude = serializers.FloatField(allow_null=True, help_text="as detection stored it: signed by goodness (-0.05: 5 % "
                                       "worse); the gap: ratio - 1. Shown: change and direction")
    message = serializers.SerializerMethodField()
    reasons = serializers.SerializerMethodField()
    status = serializers.ChoiceField(choices=REGRESSION_STATUSES)
    status_changed_by = WhoField()
    status_changed_at = serializers.DateTimeField(allow_null=True)
    note = StrictCharField()
    created_at = serializers.DateTimeField()
    culprit_build = serializers.SerializerMethodField(help_text="the first bad build a bisection found (docs/bisect.md)")
    culprit_range = serializers.CharField(help_text="its commits: last good sha...first bad sha; empty until found")
    culprit_commit = serializers.SerializerMethodField(help_text="what a bisection over commits found (docs/builds.md): sha, "
                                                       "subject, author, time, link, before, after; or needs_source_build: "
                                                       "[commits]; null until found")
    commit_range = serializers.SerializerMethodField(help_text="the commits between last good and first bad build as a "
                                                     "worker's mirror listed them: status, count, cpp, python, areas, "
                                                     "commits [{sha, subject, author, time, kind, areas, link}]; null "
                                                     "when never asked (docs/builds.md)")

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_culprit_commit(self, r) -> dict | None:
        return r.culprit_commit or None

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_commit_range(self, r) -> dict | None:
        found = regression_commits(r, limit=None)
        return {**found["summary"], "commits": found["commits"]} if found["summary"] else None

    def to_representation(self, instance):
        return super().to_representation(_WithNumbers(instance, regression_numbers(instance).as_dict()))

    def get_first_bad_build(self, r) -> str:
        return build_ref(r.first_bad_build)

    def get_last_good_build(self, r) -> str | None:
        return build_ref(r.last_good_build) if r.last_good_build_id else None

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_cause(self, r) -> dict | None:
        return FindingDetails(r.details).get("cause") or None

    def get_culprit_build(self, r) -> str | None:
        return build_ref(r.culprit_build) if r.culprit_build_id else None

    def get_message(self, r) -> str:
        return str(FindingDetails(r.details).get("message", ""))

    def get_reasons(self, r) -> list[str]:
        reasons = FindingDetails(r.details).get("reasons") or []
        return [str(x) for x in reasons] if isinstance(reasons, list) else []


class _WithNumbers:
    """A regression whose attributes are read through, but for its numbers (``FindingNumbersFields``)."""

    def __init__(self, regression, numbers: dict):
        self._regression, self._numbers = regression, numbers

    def __getattr__(self, name):
        return self._numbers[name] if name in self._numbers else getattr(self._regression, name)


class TriageSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=REGRESSION_STATUSES)
    note = StrictCharField(max_length=4000, required=False, allow_blank=True, default="")


class BulkTriageSerializer(TriageSerializer):
    regression_ids = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), min_length=1, max_length=1000)


class TriageOutcomeSerializer(serializers.Serializer):
    updated = serializers.IntegerField()


class VerdictQuerySerializer(Strict):
    build = build_ref_field()
    machine_class = machine_class_field(required=False, help_text="default: the build's machine class when it has one")
    baseline = build_ref_field(required=False, help_text="default: the previous build on the same machine class")
    fail_on_regression = serializers.BooleanField(default=False, help_text="answer 409 (same body) when regressed: curl --fail gates on it")
    fail_on_suspect = serializers.BooleanField(default=False, help_text="answer 409 (same body) when suspect too")


class HostSlowedSerializer(serializers.Serializer):
    slowdown = serializers.FloatField()
    before_probe_ms = serializers.FloatField()
    after_probe_ms = serializers.FloatField()


class VerdictRegressionSerializer(FindingNumbersFields):
    id = serializers.IntegerField(required=False, allow_null=True, help_text="the stored regression, when there is one")
    workload = StrictCharField()
    config = StrictCharField()
    metric = StrictCharField()
    finding = StrictCharField()
    kind = StrictCharField(help_text="regression; suspect (moved, not confirmed: the message says what would confirm it)")
    magnitude = serializers.FloatField(allow_null=True, required=False, help_text="as detection stored it (signed by goodness)")
    message = StrictCharField(allow_blank=True, required=False)
    reasons = serializers.ListField(child=StrictCharField(allow_blank=True), required=False)
    status = StrictCharField(required=False, help_text="the stored regression's triage status")
    host_slowed = HostSlowedSerializer(required=False, help_text=(
        "a host-bound case whose new runs were timed on a slowed host: the host probe (a fixed piece of "
        "Python work) before and after, and their ratio"))


class VerdictNoteSerializer(serializers.Serializer):
    metric = StrictCharField()
    kind = StrictCharField(help_text="not_comparable: measured against different compile references, not compared")
    cases = serializers.IntegerField()
    baseline_reference = StrictCharField(allow_blank=True, help_text="the baseline's compile reference (torch@sha12; empty: none recorded)")
    build_reference = StrictCharField(allow_blank=True, help_text="the build's compile reference")
    message = StrictCharField()


class VerdictSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=["pass", "regressed", "suspect", "pending", "not_compared", "error"])
    reason = StrictCharField(help_text="machine-readable: no_regressions, regressions_found, suspects_found, "
                                   "no_baseline, no_results, detection_pending, same_build, not_tracked, "
                                   "detection_failed (error: the message names the series); a variant judged against "
                                   "its base build: base_no_change, base_regressed, base_suspect")
    message = StrictCharField(allow_blank=True, help_text="what was compared with what, in words (a variant: against "
                              "its base build; same_build: 'same build: nothing to compare')")
    build = StrictCharField(help_text=BUILD_REF_HELP)
    baseline = StrictCharField(allow_null=True)
    machine_class = StrictCharField()
    regressions = VerdictRegressionSerializer(many=True)
    culprits = serializers.ListField(child=serializers.DictField(), required=False, help_text=(
        "culprit commits bisections found for these regressions (docs/builds.md): regression, sha, link, "
        "needs_source_build (how many commits only a source build tells apart), text"))
    notes = VerdictNoteSerializer(many=True, help_text=(
        "what was not compared, never counted: compile_cpu_ratio measured against different compile references "
        "(a change of reference starts a new baseline of that metric)"))


class BisectRequestSerializer(serializers.Serializer):
    """``POST /api/v1/regressions/<id>/bisect/`` (docs/bisect.md); limits default to the server's."""

    kind = serializers.ChoiceField(choices=BISECTION_KINDS, default="builds",
                                   help_text="builds: between last good and first bad; overrides: the first bad build's overrides; "
                                             "commits: the commits between them, on overlay builds (docs/builds.md)")
    attempts = serializers.IntegerField(min_value=1, max_value=20, required=False, help_text="runs per build before deciding")
    max_attempts = serializers.IntegerField(min_value=1, max_value=50, required=False, help_text="runs per build at most")
    max_steps = serializers.IntegerField(min_value=1, max_value=40, required=False, help_text="midpoints decided at most")
    max_runs = serializers.IntegerField(min_value=2, max_value=500, required=False, help_text="cases requested at most")


class BisectionSerializer(serializers.Serializer):
    """A bisection: its range with each build's role and values, steps, runs and result."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["running", "done", "not_reproduced", "inconclusive", "failed", "cancelled"])
    kind = serializers.ChoiceField(choices=BISECTION_KINDS)
    metric = serializers.CharField()
    requested_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    builds = serializers.ListField(child=serializers.DictField(), help_text="in order: build, role, values, open_runs, override")
    low = serializers.IntegerField(help_text="index of the newest build known good")
    high = serializers.IntegerField(help_text="index of the oldest build known bad")
    remaining = serializers.IntegerField(help_text="builds still between them")
    steps = serializers.ListField(child=serializers.DictField())
    runs = serializers.IntegerField()
    open_runs = serializers.IntegerField()
    lost_runs = serializers.IntegerField(help_text="runs that ended without a value (requested again)")
    limits = serializers.DictField()
    culprit_build = serializers.CharField(allow_null=True)
    result = serializers.DictField()
