"""The summary tables the pages read instead of the results (issue #5), beside the catalog's models
(``models.catalog``); ``dashboard.results.models`` exports both."""
from __future__ import annotations

from django.db import models

from dashboard.results.models.catalog import Build, Config, Run

# --- Summary tables (issue #5) ---------------------------------------------------------------------
# Kept by ``dashboard.results.summaries.build_summary_refresh``, which the ingest service calls in
# its transaction: the pages read a few hundred of these rows instead of a million results. A
# build run more than once on a machine class counts each case once (the latest run's result).


class BuildSummary(models.Model):
    """One build on one machine class: the build pickers, "latest/previous build" and run links."""

    # No index of its own: the unique constraint below starts with build.
    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="summaries", db_index=False)
    machine_class = models.SlugField(max_length=64)
    ordered_at = models.DateTimeField(help_text="the build's ordered_at, copied: pages sort by it")
    synthetic = models.BooleanField(default=False, help_text="any of its runs is synthetic")
    runs = models.PositiveIntegerField(default=0)
    latest_run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    in_progress = models.BooleanField(default=False, help_text="a run of it is pending or running")
    cases = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    speedup_geomean = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["build", "machine_class"], name="buildsummary_unique"),
        ]
        indexes = [
            # Latest and previous build of a machine class (overview, compare defaults), the build
            # pickers, and the builds inside a time range (every trend): newest first per class.
            models.Index(fields=["machine_class", "-ordered_at"], name="buildsummary_class_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.build} on {self.machine_class}"


class LatestTables(models.Model):
    """The home page's tables of a machine class's latest build over every configuration: the
    per-suite table (``selectors.suites.suite_table``), the training rows
    (``selectors.training.training_table``) and last night's failures by status
    (``selectors.builds.build_not_passed``), stored so a cold ``/`` reads one row per class instead
    of the build's ~2,000 cases (issue #46 item 13; a page filtered to some configurations reads
    the cases). Written by ``results.services.latest_tables``: after each ingest (the pipeline's
    ``regressions.noise_bands`` task) and by the first ``/`` that finds none fresh. ``inputs``
    fingerprints what they were computed from (the build, its ``BuildSummary`` counts, the tables'
    version): tables whose inputs changed are computed again, never served. Nothing in save()."""

    machine_class = models.SlugField(max_length=64, unique=True)
    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+")
    inputs = models.CharField(max_length=40, help_text="fingerprint of the build, its BuildSummary counts, the tables' version")
    tables = models.TextField(help_text='JSON: {"suites": [SuiteRow], "training": [TrainingRow], "not_passed": {status: n}}')
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"latest tables of {self.machine_class}"


class ConfigSummary(models.Model):
    """One configuration of one build on one machine class: a cell of the overview and a point of
    its suite-level trends. Means and geomeans are over passing cases that have the metric."""

    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="config_summaries", db_index=False)
    machine_class = models.SlugField(max_length=64)
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="summaries")
    ordered_at = models.DateTimeField()
    cases = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    speedup_geomean = models.FloatField(null=True, blank=True)
    compile_time_cold_mean = models.FloatField(null=True, blank=True)
    compile_time_warm_mean = models.FloatField(null=True, blank=True)
    memory_compression_geomean = models.FloatField(null=True, blank=True)
    graph_breaks = models.PositiveIntegerField(default=0)
    recompiles = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Also the index of "the summary rows of build B on class C" (overview table).
            models.UniqueConstraint(fields=["build", "machine_class", "config"], name="configsummary_unique"),
        ]
        indexes = [
            # Suite-level trend: every configuration of a machine class over a time range.
            models.Index(fields=["machine_class", "ordered_at"], name="configsummary_class_time"),
        ]

    def __str__(self) -> str:
        return f"{self.build} {self.config} on {self.machine_class}"


class DynamicSummary(models.Model):
    """One compile mode and dtype of one build on one machine class, backed and unbacked side by side
    per workload: /dynamic/ reads one of these rows per build (~90) instead of ~14,000 results (#17,
    at 1,000,000 results). Kept with the other summaries by ``build_summary_refresh``."""

    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="dynamic_summaries", db_index=False)
    machine_class = models.SlugField(max_length=64)
    # The configurations it sums up, backed and unbacked on any device: a CaseConfig.pattern such as
    # ``default/*/float32/*`` (contract.case_config).
    config_key = models.CharField(max_length=200)
    ordered_at = models.DateTimeField()
    # [[workload, backed, unbacked], ...] in the order the build's results were stored; a side is
    # [status, speedup, compile_time_cold_s, graph_break_count, recompile_count] (the case stored
    # last) or null. Read for the build the page shows.
    pairs = models.JSONField(default=list)
    # What the trends read for every build: {workload: unbacked / backed speedup or null}, and the
    # geomeans over the pairs in their stored order (so they add up as they always did).
    gaps = models.JSONField(default=dict)
    geomean_gap = models.FloatField(null=True, blank=True)
    geomean_compile_ratio = models.FloatField(null=True, blank=True)
    # What the trends mark per workload besides its gap, from the pairs (``selectors.dynamic.pairs_marks``):
    # {"version", "failed": {workload: "unbacked compile_error"}, "quiet": {workload: "within noise"},
    # "every_dim": [workload]}. Null, or another version: /dynamic/ marks the row from its pairs.
    marks = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also the index of /dynamic/'s read: the builds of a range, one mode and dtype of a class.
            models.UniqueConstraint(fields=["build", "machine_class", "config_key"], name="dynamicsummary_unique_config"),
        ]

    def __str__(self) -> str:
        return f"{self.build} {self.config_key} on {self.machine_class} (backed vs unbacked)"
