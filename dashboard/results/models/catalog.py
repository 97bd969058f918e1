"""The catalog of the data model (docs/architecture.md): what was measured, where and of which build. Writes go through ``services``; nothing here has logic in save()."""
from __future__ import annotations

import uuid

from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.utils.functional import cached_property

from contract import reasons
from contract.case_config import CaseConfig
from contract.vocabulary import RESULT_STATUSES


class Machine(models.Model):
    """A host that ran benchmarks. Machines of one ``machine_class`` are interchangeable."""

    hostname = models.CharField(max_length=255)
    machine_class = models.SlugField(max_length=64, help_text="e.g. cpu, gpu-h100: series are per class")
    cpu_model = models.CharField(max_length=200, blank=True)
    cpu_count = models.PositiveIntegerField(null=True, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    gpu_name = models.CharField(max_length=200, blank=True)
    gpu_count = models.PositiveIntegerField(default=0)
    driver_version = models.CharField(max_length=64, blank=True)
    cuda_version = models.CharField(max_length=32, blank=True)
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hostname", "machine_class"], name="machine_unique_host_class")]
        ordering = ["machine_class", "hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} ({self.machine_class})"


class Build(models.Model):
    """One PyTorch build: a torch at a git sha, told apart from a patched build of it by ``local_label``."""

    torch_version = models.CharField(max_length=64)
    git_sha = models.CharField(max_length=40, help_text="torch.version.git_version, or 'unknown'")
    local_label = models.CharField(max_length=100, blank=True, default="")
    label = models.CharField(max_length=200, blank=True, help_text="name shown on pages")
    commit_time = models.DateTimeField(null=True, blank=True)
    # The time builds are ordered by on every trend (dashboard/results/build_dates.py): the commit
    # time, else a nightly's date or a known release's date, else its first run's started_at. Set
    # when the build is created (or by its first run), so series never reorder.
    ordered_at = models.DateTimeField()
    triton_version = models.CharField(max_length=64, blank=True)
    cuda_version = models.CharField(max_length=32, blank=True)
    python_version = models.CharField(max_length=32, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    # A build variant's compiler settings (issue #16), ``{"config": {...}, "env": {...}}`` as
    # ``contract.variants.Overrides.as_document``; empty for a plain build.
    overrides = models.JSONField(default=dict, blank=True)
    # Its torch's config keys and their types (``contract.variants``: ``{"torch_version", "sections"}``),
    # recorded when the build is probed (``register_build``, a worker's report); empty until then.
    # The API and the admin check a variant's config overrides against its base build's.
    config_catalog = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["git_sha", "local_label"], name="build_unique_sha_label")]
        indexes = [
            # Trend and "previous build" queries walk builds in time order.
            models.Index(fields=["ordered_at"], name="build_ordered_at"),
        ]
        ordering = ["-ordered_at"]

    def __str__(self) -> str:
        return self.label or f"{self.torch_version} ({self.git_sha[:10]}{'+' + self.local_label if self.local_label else ''})"


class Workload(models.Model):
    """A model in the suite. Created on first ingest from the document's ``workloads`` entry."""

    PHASES = [("infer", "inference"), ("train", "training step")]

    name = models.CharField(max_length=200, unique=True)
    category = models.CharField(max_length=64, blank=True)
    phase = models.CharField(max_length=8, choices=PHASES)
    dynamic_dims = models.JSONField(default=list, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Config(models.Model):
    """How a workload is compiled and fed, as one identity: ``key`` is its
    ``contract.case_config.CaseConfig`` key (``default/static/float32/cuda``), ``tags`` its fields
    (docs/case-config.md). A new axis or value is a new key and new tags: no migration.

    Train vs inference is a property of the workload (issue #3), not of the config.
    """

    key = models.CharField(max_length=200, unique=True, help_text="contract.case_config.CaseConfig.key")
    tags = models.JSONField(default=dict, help_text="the configuration's fields (CaseConfig.as_document)")

    class Meta:
        ordering = [KeyTextTransform(axis, "tags") for axis in ("device", "dtype", "compile_mode", "shape_regime")] + ["key"]

    @cached_property
    def case_config(self) -> CaseConfig:
        return CaseConfig.from_document(self.tags)

    def __str__(self) -> str:
        return self.key


class Series(models.Model):
    """The explicit identity of one line on a trend chart: workload x config x machine class.

    Each metric column of ``Result`` is one series of it (docs/architecture.md: a series with a metric is what detection follows):
    one row per case keeps a run's results in one row each instead of one per metric. ``signature``
    is a stable hash of the identity, like Perfherder's signature hash and Conbench's history
    fingerprint, so links and external tools can name a series without our primary keys.
    """

    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="series")
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="series")
    machine_class = models.SlugField(max_length=64)
    signature = models.CharField(max_length=40, unique=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workload", "config", "machine_class"], name="series_unique_identity")
        ]
        verbose_name_plural = "series"

    def __str__(self) -> str:
        return f"{self.workload.name} {self.config} on {self.machine_class}"


class Run(models.Model):
    """One execution of workloads at a size for a build on a machine. Its id comes from the run document."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Reason(models.TextChoices):
        """Why the run was measured (docs/architecture.md, run reasons): only nightly and requested
        runs raise findings; a re-measurement's results only decide the suspect it was asked for;
        a bisection run is never a point of a series."""
        NIGHTLY = reasons.NIGHTLY  # the values are contract.reasons' (the document's schema)
        REQUESTED = reasons.REQUESTED
        REMEASUREMENT = reasons.REMEASUREMENT
        BISECTION = reasons.BISECTION

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="runs")
    machine = models.ForeignKey(Machine, on_delete=models.PROTECT, related_name="runs")
    # tiny or full (contract.vocabulary.SIZES); the run document's ``run.suite`` (schema version 1).
    size = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    command = models.TextField(blank=True)
    requested_by = models.CharField(max_length=200, blank=True)
    reason = models.CharField(max_length=16, choices=Reason.choices, default=Reason.NIGHTLY,
                              help_text="nightly (a run document's default), requested (the API's and CI's), "
                                        "remeasurement, bisection")
    synthetic = models.BooleanField(default=False, help_text="generated data: pages label it as such")
    imported = models.BooleanField(default=False, help_text="sample data measured elsewhere (ingest --imported)")
    notes = models.TextField(blank=True)
    # The document's build facts as this run saw them (Python, triton, CUDA, the interpreter's
    # environment): a Build row keeps the first run's, and one commit can be measured from several
    # interpreters (docs/explain.md, "environments").
    build_facts = models.JSONField(default=dict, blank=True)
    # How many cases the run plans, when whoever started it said so: the run page's progress is
    # the results stored so far over this.
    cases_expected = models.PositiveIntegerField(null=True, blank=True)
    # What a requested run measures (workloads, modes, regimes, dtypes, timeout): empty for a run
    # that arrived as a document.
    matrix = models.JSONField(default=dict, blank=True)
    # The client's Idempotency-Key of a requested run: the same key from the same requester answers
    # the run it created instead of a second one (a retry after a lost answer).
    idempotency_key = models.CharField(max_length=100, blank=True, default="")
    ingested_at = models.DateTimeField(auto_now_add=True)
    # Its stored results counted (dashboard.results.run_counts): kept by the ingest so the home page's
    # recent runs read them instead of counting results per request; null: not counted yet (counted then).
    result_count = models.PositiveIntegerField(null=True, blank=True)
    pass_count = models.PositiveIntegerField(null=True, blank=True)
    graph_break_total = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [
            # Home page and run lists: newest runs first.
            models.Index(fields=["-ingested_at"], name="run_newest"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["requested_by", "idempotency_key"], condition=~models.Q(idempotency_key=""),
                                    name="run_unique_idempotency_key"),
        ]
        ordering = ["-ingested_at"]

    def __str__(self) -> str:
        return f"{self.size} on {self.machine} for {self.build}"


class Result(models.Model):
    """One case of one run: its status, metrics, samples, graph breaks, recompiles and repro."""

    # PASS = "pass", FAIL_ACCURACY = "fail_accuracy", ...: the run document's statuses.
    Status = models.TextChoices("Status", [(status.upper(), status) for status in RESULT_STATUSES])

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="results")
    # The run's build, copied so that "results of build X" (compare, verdict) needs no join;
    # a run's build never changes.
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="results")
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="results")
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="results")
    series = models.ForeignKey(Series, on_delete=models.PROTECT, related_name="results")
    status = models.CharField(max_length=24, choices=Status.choices)

    speedup = models.FloatField(null=True, blank=True)
    speedup_noise = models.FloatField(null=True, blank=True, help_text="relative half-width of the 95% CI")
    eager_latency_ms = models.FloatField(null=True, blank=True)
    compiled_latency_ms = models.FloatField(null=True, blank=True)
    compile_time_cold_s = models.FloatField(null=True, blank=True)
    compile_time_warm_s = models.FloatField(null=True, blank=True)
    compile_cpu_ratio = models.FloatField(
        null=True, blank=True, help_text="cold compile CPU time over the reference build's, compiled beside it (runner.engine.compile_pairs)")
    # The reference that ratio was measured against (environment.compile_pairs.reference), named by
    # dashboard.results.compile_reference at ingest; "" without compile pairs. Ratios of different
    # references are never compared: a change of reference starts a new baseline of that metric.
    compile_reference = models.CharField(
        max_length=100, blank=True, default="", help_text="the compile_cpu_ratio's reference: torch@sha12 (dashboard.results.compile_reference)")
    eager_peak_memory_bytes = models.BigIntegerField(null=True, blank=True)
    compiled_peak_memory_bytes = models.BigIntegerField(null=True, blank=True)
    memory_compression = models.FloatField(null=True, blank=True, help_text="eager peak / compiled peak")
    graph_break_count = models.PositiveIntegerField(null=True, blank=True)
    unique_graphs = models.PositiveIntegerField(null=True, blank=True)
    recompile_count = models.PositiveIntegerField(null=True, blank=True)
    accuracy_max_abs_error = models.FloatField(null=True, blank=True)
    accuracy_max_rel_error = models.FloatField(null=True, blank=True)

    samples = models.JSONField(default=dict, blank=True)
    graph_breaks = models.JSONField(default=list, blank=True)
    recompiles = models.JSONField(default=list, blank=True)
    error = models.JSONField(null=True, blank=True)
    # Seconds of each phase of a compile path before the first call ({"export_s", "package_s",
    # "load_s", "first_call_s"}: the document's ``path_phases``, docs/compile-paths.md); empty for
    # a torch.compile mode.
    path_phases = models.JSONField(default=dict, blank=True)
    repro = models.TextField(blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    # The case's kept artifact as the run document referenced it (kind, name, sha256, size_bytes,
    # dropped...; no path): its file is an ``Artifact`` when it was uploaded and not pruned since.
    artifact = models.JSONField(null=True, blank=True)
    # Run document version 2 (docs/explain.md): the compiles by phase (keys from contract.phases),
    # the kernel profile and the case's wall time split; empty for version-1 documents.
    compile_phases = models.JSONField(default=dict, blank=True)
    kernel_profile = models.JSONField(default=dict, blank=True)
    cost = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "workload", "config"], name="result_unique_case_per_run"),
        ]
        indexes = [
            # Trend query: one series' results over builds (joined to build.ordered_at for order).
            models.Index(fields=["series", "build"], name="result_series_build"),
            # Compare / verdict: every result of one build, matched across builds by series.
            models.Index(fields=["build", "series"], name="result_build_series"),
        ]

    def __str__(self) -> str:
        return f"{self.workload.name} {self.config}: {self.status}"


class Artifact(models.Model):
    """A file a case kept (its TORCH_TRACE log, gzip), stored under ARTIFACT_ROOT by its sha256 and
    referenced by results through ``Result.artifact["sha256"]`` (docs/artifacts.md). Data only: it
    is served as an attachment, never rendered."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    name = models.CharField(max_length=200, help_text="the file name a download gets")
    size_bytes = models.BigIntegerField()
    stored_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # Retention (prune_artifacts): the oldest first.
            models.Index(fields=["stored_at"], name="artifact_stored_at"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.size_bytes} bytes)"
