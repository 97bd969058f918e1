"""Input (query and body) and output serializers. Inputs validate and name the field at fault;
outputs are plain serializers over models and selector results (the schema is generated from them)."""
from __future__ import annotations

from rest_framework import serializers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from contract.case_config import AXIS_NAMES
from contract.facts import FindingDetails
from contract.reasons import REQUEST_DEFAULT, RUN_REASONS
from contract.variants import InvalidOverride, Overrides
from contract.suggest import did_you_mean, unknown_message
from contract.suites import suite_problem
from contract.vocabulary import COMPILE_MODES, DTYPES, MACHINE_CLASS_PATTERN, SHAPE_REGIMES, SIZES
from dashboard.regressions.board import regression_numbers
from dashboard.regressions.selectors_commits import regression_commits
from dashboard.results.models import Run
from dashboard.results.selectors.common import METRICS, RANGES, build_ref
from dashboard.results.selectors.compare import FILTERS, SORT_KEYS
from dashboard.results.variants import base_of, catalog_of
from contract.document import LOCAL_LABEL_PATTERN, environment_errors, time_problem
from contract.values import text_problem, value_problems

SHA_PATTERN = r"^([0-9a-f]{7,40}|unknown)$"
BUILD_REF_HELP = "a build: the first 12 hex digits of its git sha (any unique prefix of 7+), then +local_label if it has one"
REGRESSION_STATUSES = ["untriaged", "acknowledged", "investigating", "invalid", "fixed", "wontfix"]
REGRESSION_STATUS_FILTERS = ["open", "all", *REGRESSION_STATUSES]  # the board's own values (/regressions/?status=all)
REGRESSION_FINDINGS = ["change_point", "started_failing", "status_changed", "new_graph_break", "more_graph_breaks",
                       "new_recompile_reason", "more_recompiles", "dynamic_gap"]
METRIC_CHOICES = [m.name for m in METRICS]
REGRESSION_KINDS = ["regression", "improvement"]  # named in the OpenAPI schema (settings ENUM_NAME_OVERRIDES)
REGRESSION_KIND_FILTERS = [*REGRESSION_KINDS, "all"]
BISECTION_KINDS = ["builds", "overrides", "commits"]  # a regression's builds, a variant's overrides, or commits (docs/bisect.md, docs/builds.md)


def _string_only(data):
    """DRF's CharField turns a number into its text (``git_sha: 1234567`` became "1234567"): a
    JSON value that is not a string is refused instead, naming its type; so is a string the
    database cannot store (``contract.values``: a NUL, an unpaired surrogate)."""
    if not isinstance(data, str):
        raise serializers.ValidationError(f"expected a string, got {type(data).__name__}")
    if problem := text_problem(data):
        raise serializers.ValidationError(problem)
    return data


def _storable(value, field: str):
    """A JSON field's value checked by ``contract.values`` (strings, numbers, nesting): 400 naming
    the first bad entry, e.g. ``env.TORCH_X`` or ``environment.a.b``."""
    problems = value_problems(value, [field])
    if problems:
        raise serializers.ValidationError({f.removeprefix(field).lstrip(".") or "non_field_errors": [m] for f, m in problems[:10]})
    return value


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data):
        return super().to_internal_value(_string_only(data))


class StrictRegexField(serializers.RegexField):
    def to_internal_value(self, data):
        return super().to_internal_value(_string_only(data))


class WhoField(StrictCharField):
    """Who did a write (``requested_by``, ``status_changed_by``). A dashboard account's user name
    (a staff member) is shown only to a reader who holds a token or is signed in; anyone else
    reads ``staff``. CI systems (``api:<name>``) and labels (``schedule``) are shown to all."""

    def to_representation(self, value):
        value = super().to_representation(value)
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if not value or (user is not None and user.is_authenticated):
            return value
        cache = self.context.setdefault("_accounts", {})
        if value not in cache:
            from dashboard.api.selectors import account_names  # noqa: PLC0415

            cache[value] = bool(account_names(names=[value]))
        return "staff" if cache[value] else value


def machine_class_field(**kwargs):
    kwargs.setdefault("help_text", "e.g. cpu, gpu-h100")
    return StrictRegexField(MACHINE_CLASS_PATTERN, max_length=64, **kwargs)


def build_ref_field(**kwargs):
    kwargs["help_text"] = f"{kwargs['help_text']}; {BUILD_REF_HELP}" if "help_text" in kwargs else BUILD_REF_HELP
    return StrictCharField(max_length=160, **kwargs)


class Strict(serializers.Serializer):
    """Refuses fields it does not know (a typo in a filter must not silently widen the answer)."""

    ignored = ("page", "page_size", "format")

    def to_internal_value(self, data):
        known = set(self.fields) | set(self.ignored)
        unknown = sorted(k for k in getattr(data, "keys", lambda: [])() if k not in known)
        if unknown:
            raise serializers.ValidationError({k: [unknown_parameter(k, self.fields)] for k in unknown})
        if hasattr(data, "getlist"):  # a query string: one value per parameter
            twice = [k for k in data.keys() if len(data.getlist(k)) > 1]
            if twice:
                raise serializers.ValidationError({k: ["given more than once"] for k in twice})
        # a value that is not one of a choice's: named with the one probably meant (contract.suggest)
        wrong = {name: [unknown_message(name, str(data[name]), map(str, field.choices))]
                 for name, field in self.fields.items() if isinstance(field, serializers.ChoiceField)
                 and name in data and isinstance(data[name], str) and data[name] not in map(str, field.choices)}
        if wrong:
            raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


def unknown_parameter(name: str, known) -> str:
    guess = did_you_mean(name, known)
    return f"unknown parameter{f'; did you mean {guess!r}?' if guess else ''} expected one of {', '.join(sorted(known))}"


# --- errors (documented on every operation) --------------------------------------------------------
class ErrorItemSerializer(serializers.Serializer):
    field = StrictCharField(allow_null=True, help_text="body path (results[3].status), parameter, header, 'body', or null")
    message = StrictCharField()


class ErrorSerializer(serializers.Serializer):
    status = serializers.IntegerField()
    detail = StrictCharField(help_text="the first error's message")
    errors = ErrorItemSerializer(many=True)


# --- build variants (issue #16) --------------------------------------------------------------------
DATA_ONLY_HELP = ("; only settings that are data: a path, program, compiler, library or remote cache is refused "
                  "(400 naming the key; docs/variants-and-settings.md)")
CONFIG_HELP = ('a build variant\'s compiler settings, {"inductor.KEY": value} (sections inductor, dynamo, functorch): '
               "true/false, numbers, null, or a known enumeration's value" + DATA_ONLY_HELP)
ENV_HELP = ('a build variant\'s environment, {"TORCHINDUCTOR_X": "1"} (TORCHINDUCTOR_*, TORCH_*, TRITON_*): numbers, '
            "0/1, true/false, or a known enumeration's value" + DATA_ONLY_HELP)


class OverridesInput(serializers.Serializer):
    """``config`` and ``env`` of a body, checked by ``contract.variants``; ``validated_data``
    gets ``overrides`` (an ``Overrides``) in their place. A bad entry is named: ``config.inductor.KEY``."""

    config = serializers.JSONField(required=False, default=dict, help_text=CONFIG_HELP)
    env = serializers.JSONField(required=False, default=dict, help_text=ENV_HELP)

    def validate_config(self, value):
        return _storable(value, "config")

    def validate_env(self, value):
        return _storable(value, "env")

    def validate(self, attrs):
        attrs = super().validate(attrs)
        try:
            attrs["overrides"] = Overrides.build(attrs.pop("config", None), attrs.pop("env", None))
        except InvalidOverride as exc:
            raise serializers.ValidationError({exc.field: [exc.message]}) from None
        return attrs


class BuildRefSerializer(serializers.Serializer):
    ref = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    name = serializers.SerializerMethodField()

    def get_ref(self, build) -> str:
        return build_ref(build)

    def get_name(self, build) -> str:
        return str(build)


# --- builds ----------------------------------------------------------------------------------------
class BuildSerializer(serializers.Serializer):
    """A build as lists show it (without its environment)."""

    ref = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    git_sha = StrictCharField()
    local_label = StrictCharField()
    torch_version = StrictCharField()
    label = StrictCharField()
    name = serializers.SerializerMethodField(help_text="the name shown on pages")
    commit_time = serializers.DateTimeField(allow_null=True)
    ordered_at = serializers.DateTimeField(help_text="builds are ordered by this: the commit time, else a nightly's or known release's date, else the start of its first run")
    triton_version = StrictCharField()
    cuda_version = StrictCharField()
    python_version = StrictCharField()
    created_at = serializers.DateTimeField()
    machine_classes = serializers.SerializerMethodField(help_text="the machine classes it has runs on")
    overrides = serializers.DictField(help_text='a variant\'s {"config": {...}, "env": {...}}; empty for a plain build')
    base = serializers.SerializerMethodField(help_text="a variant's base build (same sha, the base label) when stored")

    def get_ref(self, build) -> str:
        return build_ref(build)

    def get_base(self, build) -> BuildRefSerializer(allow_null=True):
        base = base_of(build)
        return BuildRefSerializer(base).data if base else None

    def get_name(self, build) -> str:
        return str(build)

    def get_machine_classes(self, build) -> list[str]:
        return sorted(s.machine_class for s in build.summaries.all())


class BuildDetailSerializer(BuildSerializer):
    """One build, with its ``environment`` (lists leave it out: it can be large)."""

    environment = serializers.DictField()
    probed = serializers.SerializerMethodField(
        help_text="whether its torch's config keys are known (a worker or register_build probed it, or its base): "
        "a variant's config overrides are checked against them")

    def get_probed(self, build) -> bool:
        return bool(catalog_of(build))


class BuildRegisterSerializer(OverridesInput):
    """The ``build`` object of a run document; with ``config``/``env``, its variant (the local
    label derived from the given one and the overrides)."""

    torch_version = StrictCharField(max_length=64)
    git_sha = StrictRegexField(SHA_PATTERN, max_length=40, help_text="torch.version.git_version (7-40 hex digits) or 'unknown'")
    local_label = StrictRegexField(LOCAL_LABEL_PATTERN, max_length=100, required=False, allow_blank=True, default="",
                                   error_messages={"invalid": "letters, digits and . _ + - only (it is part of the build's ref and URLs)"},
                                   help_text="tells apart builds of one sha (a local patch, another toolchain)")
    label = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    commit_time = serializers.DateTimeField(required=False, allow_null=True, default=None)
    triton_version = StrictCharField(max_length=64, required=False, allow_null=True, allow_blank=True, default=None)
    cuda_version = StrictCharField(max_length=32, required=False, allow_null=True, allow_blank=True, default=None)
    python_version = StrictCharField(max_length=32, required=False, allow_null=True, allow_blank=True, default=None)
    environment = serializers.DictField(required=False, default=dict)

    def validate_environment(self, value: dict) -> dict:
        _storable(value, "environment")
        if errors := environment_errors("environment", value):
            raise serializers.ValidationError([e.message for e in errors])
        return value

    def validate_commit_time(self, value):
        if value is not None and (problem := time_problem(value)):
            raise serializers.ValidationError(problem)
        return value

    def to_document_build(self) -> tuple[dict, Overrides]:
        """The base build's document ``build`` and the variant's overrides (none for a plain build)."""
        data = dict(self.validated_data)
        data["commit_time"] = data["commit_time"].isoformat() if data["commit_time"] else None
        return data, data.pop("overrides")


# --- runs ------------------------------------------------------------------------------------------
class MachineSerializer(serializers.Serializer):
    hostname = StrictCharField()
    machine_class = StrictCharField()
    gpu_name = StrictCharField()


class ProgressSerializer(serializers.Serializer):
    stored = serializers.IntegerField(help_text="results stored so far")
    expected = serializers.IntegerField(allow_null=True, help_text="cases the run plans, when known")
    fraction = serializers.FloatField(allow_null=True)
    failed = serializers.IntegerField(help_text="stored results that did not pass")
    by_status = serializers.DictField(child=serializers.IntegerField())


class RunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Run.Status.values)
    build = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    machine = MachineSerializer()
    size = StrictCharField(help_text="tiny or full (the run document's run.suite)")
    requested_by = WhoField()
    reason = serializers.ChoiceField(choices=Run.Reason.values, help_text="why the run was measured (docs/architecture.md)")
    command = StrictCharField()
    notes = StrictCharField()
    synthetic = serializers.BooleanField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    ingested_at = serializers.DateTimeField(help_text="when the run was first stored or requested")
    progress = serializers.SerializerMethodField()

    def get_build(self, run) -> str:
        return build_ref(run.build)

    @staticmethod
    def _progress(run) -> dict:
        p = getattr(run, "progress", None)
        if p is None:
            return {"stored": 0, "expected": run.cases_expected, "fraction": 0.0 if run.cases_expected else None, "failed": 0, "by_status": {}}
        return {"stored": p.stored, "expected": p.expected, "fraction": p.fraction, "failed": p.failed, "by_status": p.by_status}

    def get_progress(self, run) -> ProgressSerializer:
        return self._progress(run)


class RunRequestSerializer(OverridesInput):
    build = build_ref_field()
    machine_class = machine_class_field()
    size = serializers.ChoiceField(SIZES, default="full", help_text="workload size: full (GPU) or tiny (CPU)")
    suite = StrictCharField(max_length=64, required=False, allow_null=True, default=None,
                            help_text="a suite whose workloads join workloads: core, hf, timm, torchvision or all "
                                      "(docs/families.md); a size here (its name before #34) is refused naming size")
    cases_expected = serializers.IntegerField(
        min_value=1, max_value=1_000_000, required=False, allow_null=True, default=None,
        help_text="for a run that an outside runner submits (implies dispatch=false); the workers' plan sets it otherwise")
    hostname = StrictCharField(max_length=255, required=False, allow_blank=True, default="",
                                     help_text="a particular machine; default: any machine of the class")
    notes = StrictCharField(max_length=4000, required=False, allow_blank=True, default="")
    dispatch = serializers.BooleanField(default=True, help_text="queue the cases on the class's runner workers; false: "
                                        "an outside runner submits the run's document under its id")
    workloads = serializers.ListField(child=StrictCharField(max_length=200), required=False, allow_null=True,
                                      default=None, max_length=200,
                                      help_text="workload names (hf:BertForMaskedLM@batch) or suites standing for their "
                                      "workloads (core, hf, timm, torchvision, dist, all: docs/families.md); default: the core suite")
    modes = serializers.ListField(child=serializers.ChoiceField(COMPILE_MODES), required=False, allow_null=True, default=None,
                                  max_length=len(COMPILE_MODES),
                                  help_text="default: the four torch.compile modes on a GPU class, default on cpu; the "
                                            "compile paths (export, aot_inductor, cpp_wrapper, freezing) run when named")
    regimes = serializers.ListField(child=serializers.ChoiceField(SHAPE_REGIMES), required=False, allow_null=True,
                                    default=None, max_length=3, help_text="default: static, backed, unbacked")
    dtypes = serializers.ListField(child=serializers.ChoiceField(DTYPES), required=False, allow_null=True, default=None,
                                   max_length=5, help_text="default: each workload's first dtype")
    dims = serializers.ListField(child=StrictCharField(max_length=100), required=False, allow_null=True, default=None,
                                 max_length=16, help_text="dynamic dims to mark, by role (batch, sequence) or name "
                                                          "(input_ids:1); default: every declared dim (docs/case-config.md)")
    timeout_s = serializers.FloatField(min_value=1, max_value=86400, required=False, allow_null=True, default=None,
                                       help_text="seconds per case phase (default: the server's DISPATCH_CASE_TIMEOUT_S)")
    reason = serializers.ChoiceField(RUN_REASONS, default=REQUEST_DEFAULT,
                                     help_text="why: only nightly and requested runs raise findings; a bisection run "
                                               "is never a point of a series (docs/architecture.md, run reasons)")

    def validate_suite(self, value):
        if value is not None and (problem := suite_problem(value)):
            raise serializers.ValidationError(problem)
        return value

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if attrs.get("cases_expected") is not None:
            if "dispatch" not in self.initial_data:
                attrs["dispatch"] = False  # an outside runner says how many cases it will submit
            elif attrs["dispatch"]:
                raise serializers.ValidationError({"cases_expected": "the workers' plan sets it: give it only with dispatch=false"})
        return attrs


class SubmitOutcomeSerializer(serializers.Serializer):
    run_id = serializers.UUIDField()
    created = serializers.BooleanField(help_text="the run was new")
    results_created = serializers.IntegerField()
    results_skipped = serializers.IntegerField(help_text="already stored: posting a run again stores nothing twice")
    run = RunSerializer()


class SubmitQuerySerializer(Strict):
    complete = serializers.BooleanField(default=True, help_text="false: a partial document; the run stays running")


# --- results ---------------------------------------------------------------------------------------
ConfigSerializer = type(
    "ConfigSerializer", (serializers.Serializer,),
    {axis: StrictCharField(source=f"case_config.{axis}") for axis in AXIS_NAMES}
    | {"__doc__": "A case's configuration: the fields of its contract.case_config.CaseConfig (docs/case-config.md)."},
)


# --- series ----------------------------------------------------------------------------------------
class SeriesSerializer(serializers.Serializer):
    signature = StrictCharField(help_text="the series' stable identity (workload x config x machine class)")
    workload = StrictCharField(source="workload.name")
    config = ConfigSerializer()
    machine_class = StrictCharField()


class SeriesPointsQuerySerializer(Strict):
    metric = serializers.ChoiceField(choices=METRIC_CHOICES, default="speedup")
    range = serializers.ChoiceField(choices=list(RANGES), default="all", help_text="time back from the series' newest build")


class MetricInfoSerializer(serializers.Serializer):
    name = StrictCharField()
    label = StrictCharField()
    unit = StrictCharField()
    higher_is_better = serializers.BooleanField()


class PointSerializer(serializers.Serializer):
    build = StrictCharField(help_text=BUILD_REF_HELP)
    at = serializers.DateTimeField(help_text="the build's ordered_at")
    run = serializers.UUIDField()
    result = serializers.IntegerField()
    status = StrictCharField()
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True, help_text="noise band: where another run of this build falls 95% of "
                                 "the time (run-to-run noise model), or the run's own band if wider")
    high = serializers.FloatField(allow_null=True)


class NoiseSerializer(serializers.Serializer):
    sd = serializers.FloatField(help_text="relative run-to-run sd (sd of the log)")
    source = serializers.ChoiceField(choices=["series", "class", "default"],
                                     help_text="the series' own replicates, the machine class's prior, or the default")
    dof = serializers.IntegerField(help_text="the series' own degrees of freedom")


class SeriesPointsPageSerializer(serializers.Serializer):
    series = SeriesSerializer()
    metric = MetricInfoSerializer()
    noise = NoiseSerializer(allow_null=True, help_text="the run-to-run noise the +- and detection use")
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = PointSerializer(many=True, help_text="one point per build, oldest first")


# --- compare ---------------------------------------------------------------------------------------
class CompareQuerySerializer(Strict):
    head = build_ref_field()
    base = build_ref_field(required=False, help_text="default: the build measured just before head on the machine class")
    machine_class = machine_class_field(required=False, help_text="default: head's machine class when it has one")
    metric = serializers.ChoiceField(choices=METRIC_CHOICES, default="speedup", help_text="decides regressed / improved")
    threshold = serializers.FloatField(default=5.0, min_value=0.0, max_value=1000.0, help_text="percent")
    filter = serializers.ChoiceField(choices=FILTERS, default="all")
    sort = serializers.ChoiceField(choices=("",) + SORT_KEYS, default="", required=False)
    dir = serializers.ChoiceField(choices=("asc", "desc"), default="asc")


class ChangeSerializer(serializers.Serializer):
    old = serializers.FloatField(allow_null=True)
    new = serializers.FloatField(allow_null=True)
    change = serializers.FloatField(allow_null=True, help_text="relative: new / old - 1")
    tone = StrictCharField(help_text="better, worse, same (a timed change within its noise), too_noisy (the series' run-to-run sd is past 20 %: not judged), reference_changed "
                           "(compile_cpu_ratio measured against different compile references: not compared) or empty")
    noise = serializers.FloatField(allow_null=True, help_text="relative: where two runs of one unchanged build differ 95 % of the time")


class CompareRowSerializer(serializers.Serializer):
    workload = StrictCharField()
    config = ConfigSerializer(source="cfg")
    base_status = StrictCharField()
    head_status = StrictCharField()
    base_result = serializers.IntegerField(source="base_result_id")
    head_result = serializers.IntegerField(source="head_result_id")
    flags = serializers.SerializerMethodField(help_text="regressed, improved, new_failures, new_graph_breaks")
    changes = serializers.DictField(child=ChangeSerializer(), help_text="per metric")

    def get_flags(self, row) -> list[str]:
        return sorted(row.flags)


class OneSidedSerializer(serializers.Serializer):
    workload = StrictCharField()
    config = StrictCharField()
    status = StrictCharField()
    result = serializers.IntegerField(source="result_id")


class ComparePageSerializer(serializers.Serializer):
    base = StrictCharField()
    head = StrictCharField()
    machine_class = StrictCharField()
    metric = StrictCharField()
    threshold = serializers.FloatField(help_text="percent")
    common = serializers.IntegerField(help_text="cases present in both builds")
    summary = serializers.DictField(child=ChangeSerializer(), help_text="geomean (totals for counts) over the rows kept")
    only_base = OneSidedSerializer(many=True)
    only_head = OneSidedSerializer(many=True)
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = CompareRowSerializer(many=True)


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
