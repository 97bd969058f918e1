"""A result as the API answers it (``/api/v1/results/`` and ``/api/v1/results/<id>/``): its case, metrics
and what explains them (docs/explain.md: compile phases, kernel profile, cost; docs/artifacts.md: its
kept trace; docs/compile-paths.md: path phases). Read-only. A list carries the kernel profile's
summary (``selectors.KERNEL_PROFILE_SUMMARY``, read in the query: the profile itself is up to 200
kernels with sources); one result carries the whole profile too."""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contract.document import METRIC_NAMES
from contract.phases import COMPILE_SIDES
from dashboard.api.selectors import KERNEL_PROFILE_TOP, kernel_profile_summary
from dashboard.api.serializers.common import BUILD_REF_HELP, ConfigSerializer, StrictCharField
from dashboard.results.artifacts import results_with_artifacts
from dashboard.results.models import Result
from dashboard.results.selectors.common import build_ref

RESULT_METRICS = (*METRIC_NAMES, "memory_compression")
MetricsSerializer = type(
    "MetricsSerializer", (serializers.Serializer,),
    {name: serializers.FloatField(allow_null=True) for name in RESULT_METRICS} | {"__doc__": "A case's metrics (null: not measured)."},
)


class ResultArtifactSerializer(serializers.Serializer):
    """The case's kept compile trace as its run document referenced it (docs/artifacts.md)."""

    kind = serializers.CharField(help_text="torch_trace")
    name = serializers.CharField(help_text="the file name a download gets")
    sha256 = serializers.CharField()
    size_bytes = serializers.IntegerField()
    raw_bytes = serializers.IntegerField(required=False, help_text="its size before compression")
    max_bytes = serializers.IntegerField(required=False, help_text="the bound it was kept within")
    truncated_records = serializers.IntegerField(required=False, help_text="records left out to keep it within max_bytes")
    dropped = serializers.ListField(child=serializers.DictField(), required=False,
                                    help_text="kinds of records dropped to keep it within max_bytes, and how many")
    upload_error = serializers.CharField(required=False, help_text="why the worker's upload failed")
    stored = serializers.BooleanField(help_text="whether this server has the file (uploaded and not pruned since)")
    download_url = serializers.URLField(allow_null=True, help_text="the file, while stored (/artifacts/<sha256>/)")


class CompileRecordSerializer(serializers.Serializer):
    """One compile by phase (contract.phases): exclusive seconds per phase, the total, counts."""

    phases = serializers.DictField(child=serializers.FloatField(), required=False,
                                   help_text="seconds per phase: dynamo, guards, aot_autograd, lowering, codegen, kernel_compile, first_run")
    total_s = serializers.FloatField(required=False, help_text="the first call's wall time: the phases add up to it")
    records_total_s = serializers.FloatField(required=False, help_text="PyTorch's own compile records' total")
    counts = serializers.DictField(child=serializers.IntegerField(), required=False,
                                   help_text="guards, graphs, kernels, cache_hits, cache_misses")
    source = serializers.CharField(required=False, help_text="which of torch's records were read")
    error = serializers.CharField(required=False)
    overhead_s = serializers.FloatField(required=False, help_text="the time reading the records took")


CompilePhasesSerializer = type(
    "CompilePhasesSerializer", (serializers.Serializer,),
    {side: CompileRecordSerializer(required=False) for side in COMPILE_SIDES}
    | {"__doc__": "The cold and warm compiles by phase (docs/explain.md); empty for a version-1 run document."},
)


class ProfileRowSerializer(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField(required=False, help_text="launches in the profiled call")
    self_ms = serializers.FloatField(required=False, help_text="self time (device time on CUDA, CPU time on CPU)")
    kind = serializers.CharField(required=False, help_text="generated (an Inductor kernel) or op (an operator)")


class KernelProfileSummarySerializer(serializers.Serializer):
    """The kernel profile in short: its device, how many kernels the compile generated, each side's top rows."""

    device = serializers.CharField(allow_null=True)
    profiled_s = serializers.FloatField(allow_null=True)
    kernels = serializers.IntegerField(allow_null=True, help_text="kernels Inductor generated (up to 200 kept)")
    compiled_top = ProfileRowSerializer(many=True, help_text=f"the compiled side's top {KERNEL_PROFILE_TOP} rows by self time")
    eager_top = ProfileRowSerializer(many=True, help_text=f"the eager side's top {KERNEL_PROFILE_TOP} rows by self time")


class ResultListSerializer(serializers.ListSerializer):
    def to_representation(self, data):
        return super().to_representation(results_with_artifacts(data))  # one query for the page's stored files


class ResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.UUIDField(source="run_id")
    build = serializers.SerializerMethodField(help_text=BUILD_REF_HELP)
    workload = StrictCharField(source="workload.name")
    config = ConfigSerializer()
    machine_class = StrictCharField(source="series.machine_class")
    series = StrictCharField(source="series.signature", help_text="the series' signature")
    status = serializers.ChoiceField(choices=Result.Status.values)
    metrics = serializers.SerializerMethodField()
    graph_breaks = serializers.ListField(child=serializers.DictField())
    recompiles = serializers.ListField(child=serializers.DictField())
    error = serializers.DictField(allow_null=True)
    path_phases = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="seconds of each compile-path phase before the first call (export_s, package_s, load_s, first_call_s); "
                  "empty for a torch.compile mode")
    compile_phases = CompilePhasesSerializer()
    kernel_profile_summary = serializers.SerializerMethodField(
        help_text="null where the case has no kernel profile (a version-1 document, or profiling off)")
    cost = serializers.DictField(child=serializers.FloatField(), help_text=(
        "the case's wall time by step, seconds (build, compile, accuracy, eager_timing, compiled_timing, memory, "
        "recompiles, profile, explain, compile_pairs, warm); empty for a version-1 document"))
    artifact = serializers.SerializerMethodField(help_text="null where the case kept none")
    repro = StrictCharField(help_text="the command line that reruns this case")
    duration_s = serializers.FloatField(allow_null=True)

    class Meta:
        list_serializer_class = ResultListSerializer

    def get_build(self, result) -> str:
        return build_ref(result.build)

    def get_metrics(self, result) -> MetricsSerializer:
        return {name: getattr(result, name) for name in RESULT_METRICS}

    @extend_schema_field(KernelProfileSummarySerializer(allow_null=True))
    def get_kernel_profile_summary(self, result):
        return kernel_profile_summary(result)

    @extend_schema_field(ResultArtifactSerializer(allow_null=True))
    def get_artifact(self, result):
        if not isinstance(result.artifact, dict):
            return None
        if not hasattr(result, "artifact_stored"):
            results_with_artifacts([result])
        reference = {k: v for k, v in result.artifact.items() if k != "path"}  # a path on the worker, not here
        url = None
        if result.artifact_stored:
            url = reverse("web:artifact", args=[result.artifact["sha256"]])
            request = self.context.get("request")
            url = request.build_absolute_uri(url) if request is not None else url
        return {**reference, "stored": result.artifact_stored, "download_url": url}


class ResultDetailSerializer(ResultSerializer):
    samples = serializers.DictField(help_text="timing samples (eager_ms, compiled_ms, calls_per_block)")
    environment = serializers.DictField()
    kernel_profile = serializers.DictField(help_text=(
        "the whole profile (docs/explain.md): device, each side's top 15 rows (compiled, eager), profiled_s, and "
        "kernels: every kernel the first compile generated (up to 200) with its fingerprint, the first 12 with "
        "their normalised source; empty where the case has none"))
