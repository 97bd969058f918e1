"""Runs: a run with its progress, a run requested, a run document submitted."""
from __future__ import annotations

from rest_framework import serializers

from contract.reasons import REQUEST_DEFAULT, RUN_REASONS
from contract.suites import suite_problem
from contract.vocabulary import COMPILE_MODES, DTYPES, SHAPE_REGIMES, SIZES
from dashboard.results.models import Run
from dashboard.results.selectors.common import build_ref
from dashboard.api.serializers.builds import MachineSerializer
from dashboard.api.serializers.common import BUILD_REF_HELP, OverridesInput, Strict, StrictCharField, WhoField, build_ref_field, machine_class_field


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
