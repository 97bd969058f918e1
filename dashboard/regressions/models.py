"""Detected changes and their triage (``Regression`` in docs/architecture.md, data model; issue #6).

A ``Regression`` is one finding on one series and metric, first seen on ``first_bad_build``:
a change point in a noisy metric (with magnitude and confidence) or a deterministic finding (a case
that starts failing, a new graph-break reason, more recompiles, an unbacked/backed gap that opens).
Improvements are kept too (``kind``), apart on the page. Findings of one detection pass over a run
are grouped in an ``AlertSummary``, like Perfherder's alert summaries. Nothing here has logic in
save(): detection and triage are in ``services``.
"""
from __future__ import annotations

from django.db import models

from contract.facts import FindingDetails
from dashboard.results.models import Build, Run, Series


class AlertSummary(models.Model):
    """The findings that detection raised while processing one run."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="alert_summary")
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="alert_summaries")
    previous_build = models.ForeignKey(
        Build, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="the build before, on the same machine class: the suspect commit range ends here",
    )
    machine_class = models.SlugField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    notified_at = models.DateTimeField(null=True, blank=True, help_text="set by alerts when sent")
    detection_failures = models.JSONField(
        default=list, blank=True,
        help_text="series whose detection raised in the newest pass over this run: [{series, workload, config, "
                  "error}]; the run's verdict is an error while any is listed (docs/machine-classes-and-verdicts.md)",
    )

    class Meta:
        indexes = [
            # Regressions page: newest summaries first.
            models.Index(fields=["-created_at"], name="alertsummary_newest"),
        ]
        ordering = ["-created_at"]
        verbose_name_plural = "alert summaries"

    def __str__(self) -> str:
        return f"{self.build} on {self.machine_class}"


class DetectionPass(models.Model):
    """Where the detection of one run stands (issue #46 item 3). Detection goes over a run's series
    in chunks, each committed with its findings and this row, so no task runs past its limits however
    large the run; a pass that is running is not started again by a copy of its message or the sweep,
    and one that finished over the run's results is not redone (``services.detection``)."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="detection_pass")
    results = models.PositiveIntegerField(default=0, help_text="the run's results when this pass started")
    after_series = models.BigIntegerField(default=0, help_text="the series done so far: every id up to this one")
    series_checked = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True, help_text="null: never started")
    beat_at = models.DateTimeField(null=True, blank=True,
                                   help_text="the newest chunk's commit: a pass silent past DETECTION_LEASE_S is taken over")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="null while the pass runs")

    def __str__(self) -> str:
        return f"detection of run {self.run_id}"


class Regression(models.Model):
    class Finding(models.TextChoices):
        CHANGE_POINT = "change_point", "change in a noisy metric"
        STARTED_FAILING = "started_failing", "started failing"
        STATUS_CHANGED = "status_changed", "failure changed"
        NEW_GRAPH_BREAK = "new_graph_break", "new graph-break reason"
        MORE_GRAPH_BREAKS = "more_graph_breaks", "more graph breaks"
        NEW_RECOMPILE_REASON = "new_recompile_reason", "new recompile reason"
        MORE_RECOMPILES = "more_recompiles", "more recompiles"
        DYNAMIC_GAP = "dynamic_gap", "unbacked/backed gap opened"

    class Kind(models.TextChoices):
        REGRESSION = "regression"
        IMPROVEMENT = "improvement"

    class Status(models.TextChoices):
        UNTRIAGED = "untriaged"
        ACKNOWLEDGED = "acknowledged"
        INVESTIGATING = "investigating"
        INVALID = "invalid", "invalid / noise"
        FIXED = "fixed"
        WONTFIX = "wontfix", "won't fix"

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="regressions")
    metric = models.CharField(max_length=64, help_text="a Result column, or status / graph_breaks / recompiles / dynamic_gap")
    finding = models.CharField(max_length=32, choices=Finding.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REGRESSION)
    first_bad_build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="regressions")
    last_good_build = models.ForeignKey(Build, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    raised_build = models.ForeignKey(
        Build, on_delete=models.PROTECT, related_name="+", help_text="the newest build when detection raised it"
    )
    summary = models.ForeignKey(AlertSummary, on_delete=models.SET_NULL, null=True, blank=True, related_name="regressions")
    magnitude = models.FloatField(null=True, blank=True, help_text="relative change signed by goodness: -0.05 = 5% worse")
    confidence = models.FloatField(null=True, blank=True)
    before_value = models.FloatField(null=True, blank=True)
    after_value = models.FloatField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True, help_text="message, reasons, z, noise, ...")

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNTRIAGED)
    status_changed_by = models.CharField(max_length=150, blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    notified_at = models.DateTimeField(null=True, blank=True, help_text="set by alerts when sent")
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by a bisection that found it (issue #31, docs/bisect.md): the first bad build among the
    # builds between last good and first bad, and the commit range it closes (``good...bad``).
    culprit_build = models.ForeignKey(Build, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    culprit_range = models.CharField(max_length=200, blank=True, help_text="last good sha...first bad sha")
    # Set by a bisection over commits (issue #41, docs/builds.md): the commit named, or the C++
    # commits only a source build can tell apart: {sha, subject, author, time, link, before, after}
    # or {needs_source_build: [shas], ...}.
    culprit_commit = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            # Detection is idempotent: one record per finding on a series, metric and first bad build.
            models.UniqueConstraint(
                fields=["series", "metric", "finding", "first_bad_build"], name="regression_unique_finding"
            ),
        ]
        indexes = [
            # Regressions page and API: filter by status (open ones), newest first.
            models.Index(fields=["status", "-created_at"], name="regression_status_newest"),
            # Verdict: the findings first seen on one build.
            models.Index(fields=["first_bad_build", "kind"], name="regression_build_kind"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_finding_display()} in {self.metric} of {self.series}"

    @property
    def message(self) -> str:
        return FindingDetails(self.details).get("message", "")


class RegressionStatusChange(models.Model):
    """The triage history: who moved a regression from which status to which, when and why."""

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=16, choices=Regression.Status.choices)
    to_status = models.CharField(max_length=16, choices=Regression.Status.choices)
    changed_by = models.CharField(max_length=150)
    changed_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["changed_at"]


class Remeasurement(models.Model):
    """A suspect on the newest build: re-run the case on it and on the build before, then decide."""

    class Status(models.TextChoices):
        PENDING = "pending", "waiting for re-runs"
        CONFIRMED = "confirmed"
        REJECTED = "rejected", "no change"
        INCONCLUSIVE = "inconclusive"

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="remeasurements")
    metric = models.CharField(max_length=64)
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="remeasurements")
    baseline_build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    suspect = models.JSONField(default=dict, help_text="the detector's suspect: magnitude, z, noise")
    decision = models.JSONField(null=True, blank=True)
    regression = models.ForeignKey(Regression, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["series", "metric", "build"], name="remeasurement_unique_case"),
        ]

    def __str__(self) -> str:
        return f"re-measure {self.metric} of {self.series} at {self.build}"


class NoiseBandSet(models.Model):
    """/compare/'s noise bands of every series of a machine class over one window of builds (#17, at
    1,000,000 results): the newest ``PRIOR_BUILDS`` builds of the class up to ``upto`` (less
    ``without``, the head compared, where it is one of them), as ``regressions.noise`` computes them
    (seconds of Python at 1,920 series x 30 builds), stored once so a compare reads one row.

    Written by ``regressions.services.noise_bands``: after each ingest (the pipeline's
    ``regressions.noise_bands`` task, for the new build and the one before) and by the first compare
    that finds none. ``inputs`` fingerprints what the bands were computed from (the window's builds
    and their ``BuildSummary`` counts, which every ingest refreshes, and the noise model's version):
    a set whose inputs changed (a re-run in the window, a build ingested late) is computed again,
    never served. Nothing in save()."""

    machine_class = models.SlugField(max_length=64)
    upto = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+", help_text="the base build compared")
    without = models.ForeignKey(Build, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                                help_text="the head build, left out of the window it is in")
    inputs = models.CharField(max_length=40, help_text="fingerprint of the window's builds and counts")
    metrics = models.JSONField(default=list, help_text="the noisy metrics, in the order of each series' bands")
    series = models.BinaryField(help_text="series ids (int64), the last one 0: the bands of a series without points")
    bands = models.BinaryField(help_text="per series, one band per metric (float64, row-major)")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # One set per window; also the index of the compare's read (class, base, head left out).
            models.UniqueConstraint(fields=["machine_class", "upto", "without"], name="noisebandset_unique_window",
                                    condition=models.Q(without__isnull=False)),
            models.UniqueConstraint(fields=["machine_class", "upto"], name="noisebandset_unique_upto",
                                    condition=models.Q(without__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"noise bands of {self.machine_class} up to {self.upto}" + (f" without {self.without}" if self.without else "")


class HomeCellSet(models.Model):
    """The home page's judged cells of one machine class (docs/noise-and-findings.md): per
    configuration, each figure's change from the class's previous build to its latest, judged by
    the noise rule against /compare/'s bands (``results.selectors.overview.class_cells``), stored
    so a cold ``/`` reads one row instead of two builds' cases and their bands.

    Written by ``regressions.services.home_cells``: after each ingest (the pipeline's
    ``regressions.noise_bands`` task, once the bands are stored) and by the first ``/`` that finds
    none fresh. ``inputs`` fingerprints what they were judged from (the bands' window, the head's
    ``BuildSummary`` counts, the judging's version): cells whose inputs changed are judged again,
    never served. Nothing in save()."""

    machine_class = models.SlugField(max_length=64, unique=True)
    base = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+", help_text="the previous build")
    head = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+", help_text="the latest build")
    inputs = models.CharField(max_length=40, help_text="fingerprint of the bands' window, the head's counts, the version")
    cells = models.JSONField(default=dict, help_text="{config id: [common cases, [[old, new, change, tone, noise] per figure]]}")
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"home cells of {self.machine_class}"


class CompareCellSet(models.Model):
    """/compare/'s judged comparison of a machine class's latest build against its previous one
    (issue #46 item 13): every case's cells (old, new, change, tone, band, sd, finding, reason), its
    flags and the one-sided cases, as ``regressions.compare.builds_compare_judged`` judges them by
    the default metric and threshold, stored so that a cold ``/compare/`` of that pair reads one row
    instead of judging 1,600 cases x 15 metrics (~0.5 s at 1,000,000 results).

    Written by ``regressions.services.compare_cells``: after each ingest (the pipeline's
    ``regressions.noise_bands`` task, once the bands are stored) and by the first request of the
    pair that finds none fresh. ``inputs`` fingerprints what they were judged from (the bands'
    window, the class's runs, the findings between the two builds, the judging's version): cells
    whose inputs changed are judged again, never served. Nothing in save()."""

    machine_class = models.SlugField(max_length=64, unique=True)
    base = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+", help_text="the previous build")
    head = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+", help_text="the latest build")
    metric = models.CharField(max_length=64, help_text="the metric the flags are judged by")
    threshold = models.FloatField(help_text="the relative threshold the changes are judged by")
    inputs = models.CharField(max_length=40, help_text="fingerprint of the bands' window, the class's runs, the findings, the version")
    comparison = models.TextField(help_text="the judged rows and one-sided cases, JSON (non-finite numbers as NaN/Infinity)")
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"compare cells of {self.machine_class}"


class Bisection(models.Model):
    """The search for the first bad build of a regression (or of any two builds and a case) among the
    builds workers of its class know, or for the override of a variant that makes it bad (issue #31,
    docs/bisect.md). ``builds`` is the ordered range searched (for overrides: the chain of variants
    the service made, the base first, one more override each); ``low``/``high`` the indexes of the
    newest good and oldest bad build known so far. Written by ``regressions.services.bisect``."""

    class Kind(models.TextChoices):
        BUILDS = "builds", "over builds"
        OVERRIDES = "overrides", "over a variant's overrides"
        COMMITS = "commits", "over commits (overlay builds)"

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "culprit found"
        NOT_REPRODUCED = "not_reproduced", "ends do not differ"
        INCONCLUSIVE = "inconclusive", "inconclusive"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, null=True, blank=True, related_name="bisections")
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="partner_searches",
                               help_text="the overrides bisection whose culprit override this one looks for a partner of")
    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="bisections")
    metric = models.CharField(max_length=64, help_text="a tracked metric, or status / graph_breaks / recompiles")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.BUILDS)
    size = models.CharField(max_length=16, default="full", help_text="the size its runs measure (tiny or full)")
    backend = models.CharField(max_length=16, default="inductor")
    builds = models.JSONField(default=list, help_text="build ids in order, good end first")
    overrides = models.JSONField(default=list, blank=True, help_text="kind overrides: [[section, key, value], ...] in chain order")
    low = models.PositiveIntegerField(default=0)
    high = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=2, help_text="runs per build before deciding")
    max_attempts = models.PositiveIntegerField(default=6, help_text="runs per build at most (unknown answers add runs)")
    max_steps = models.PositiveIntegerField(default=12)
    max_runs = models.PositiveIntegerField(default=40, help_text="cases requested at most, lost ones included")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    steps = models.JSONField(default=list, blank=True, help_text="each decided midpoint: index, build, decision, values, z")
    culprit_build = models.ForeignKey(Build, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    result = models.JSONField(default=dict, blank=True, help_text="message, last good / first bad, commits, override(s)")
    requested_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True, help_text="set by alerts when its result was sent")

    class Meta:
        constraints = [
            # One bisection at a time per regression: a second request waits for (or cancels) the first.
            models.UniqueConstraint(fields=["regression"], condition=models.Q(status="running"),
                                    name="bisection_one_running_per_regression"),
        ]
        indexes = [
            # The sweep and the pages: running bisections.
            models.Index(fields=["status", "-created_at"], name="bisection_status_newest"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"bisection {self.id} of {self.metric} on {self.series} ({self.status})"


class BisectionRun(models.Model):
    """One attempt: a run (reason ``bisection``) of the case on ``builds[index]``."""

    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, related_name="runs")
    index = models.PositiveIntegerField()
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="+")
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="bisection_attempt")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class CommitRange(models.Model):
    """The commits between two builds (issue #41, docs/builds.md), as a worker of ``machine_class``
    read them from its PyTorch mirror: each build's ``main`` commit, and per commit its sha,
    subject, author, time, kind (``cpp``: needs a source build; ``python``: only Python under
    ``torch/``; ``none``) and areas (``contract.commits``). Shared by every finding between the two
    builds. Written by ``regressions.services.commits``."""

    class Status(models.TextChoices):
        PENDING = "pending", "asked of a worker"
        LISTED = "listed"
        FAILED = "failed", "could not be listed"

    good_build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+")
    bad_build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="+")
    machine_class = models.SlugField(max_length=64, help_text="whose workers were asked (their mirror)")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    good_commit = models.CharField(max_length=40, blank=True)
    bad_commit = models.CharField(max_length=40, blank=True)
    commits = models.JSONField(default=list, blank=True, help_text="oldest first: [{sha, subject, author, time, kind, areas, ...}]")
    error = models.TextField(blank=True)
    source_build = models.BooleanField(default=False, help_text="the worker that listed it can build its C++ commits "
                                       "(PTBENCH_SOURCE_BUILD): a bisection measures them on source builds")
    requested_at = models.DateTimeField(auto_now_add=True)
    listed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["good_build", "bad_build"], name="commitrange_unique_builds")]

    def __str__(self) -> str:
        return f"commits {self.good_build} .. {self.bad_build} ({self.status})"
