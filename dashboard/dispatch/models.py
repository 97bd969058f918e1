"""Dispatch (issue #4): where builds can run, and each requested case's way through the workers."""
from __future__ import annotations

from django.db import models

from contract.case_config import CaseConfig
from dashboard.results.models import Build, Result, Run


class BuildEnvironment(models.Model):
    """An interpreter that holds a build on a host of a machine class: what a worker reported it
    has, or what someone registered (``manage.py register_build``, the admin)."""

    class Source(models.TextChoices):
        WORKER = "worker", "reported by a worker"
        REGISTERED = "registered", "registered by hand"

    build = models.ForeignKey(Build, on_delete=models.CASCADE, related_name="environments")
    machine_class = models.SlugField(max_length=64, blank=True, help_text="blank: registered without a machine class")
    hostname = models.CharField(max_length=255, blank=True)
    worker = models.CharField(max_length=255, blank=True, help_text="the Celery worker's name, e.g. gpu0@host")
    python = models.CharField(max_length=1000, help_text="the build's interpreter on that host")
    source = models.CharField(max_length=16, choices=Source.choices)
    environment = models.JSONField(default=dict, blank=True, help_text="what `python -m runner environment` said")
    reported_at = models.DateTimeField()

    class Meta:
        constraints = [
            # One interpreter holds a build and maybe variants of it (issue #16): a row per build.
            models.UniqueConstraint(fields=["machine_class", "hostname", "python", "build"], name="buildenv_unique_interpreter_build")
        ]
        ordering = ["machine_class", "hostname", "python"]

    def __str__(self) -> str:
        return f"{self.build} at {self.python} on {self.hostname or '-'} ({self.machine_class or '-'})"


class CaseTask(models.Model):
    """One case of a requested run on its way through a runner worker: queued, running, then done
    (a result is stored: any status, failures included), failed (an infrastructure error outlasted
    its retries: no result), or cancelled. The run's live progress counts these."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    OPEN_STATES = (State.QUEUED, State.RUNNING)

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="case_tasks")
    workload = models.CharField(max_length=200)
    config_key = models.CharField(max_length=200, help_text="its configuration: contract.case_config.CaseConfig.key")
    spec = models.JSONField(help_text="the runner's CaseSpec")
    workload_description = models.JSONField(help_text="the document's workloads entry")
    repro = models.TextField(blank=True)
    timeout_s = models.FloatField()

    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    attempts = models.PositiveIntegerField(default=0, help_text="times a worker started it")
    sends = models.PositiveIntegerField(default=0, help_text="times it was put on the queue")
    task_id = models.CharField(max_length=64, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    hostname = models.CharField(max_length=255, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.ForeignKey(Result, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    error = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "workload", "config_key"], name="casetask_unique_case_config"
            )
        ]
        indexes = [models.Index(fields=["state", "started_at"], name="casetask_state_started")]
        ordering = ["id"]

    @property
    def case_config(self) -> CaseConfig:
        return CaseConfig.from_key(self.config_key)

    def __str__(self) -> str:
        return f"{self.workload} {self.config_key}: {self.state}"


class Intake(models.Model):
    """One request to a machine class's workers to take in the newest build from their own package
    index (issue #41, docs/builds.md), and its answer: the build taken in (and the nightly run
    requested on it), or the failure with the installer's log."""

    class State(models.TextChoices):
        SENT = "sent", "asked of a worker"
        TAKEN = "taken", "taken in"
        FAILED = "failed"

    machine_class = models.SlugField(max_length=64)
    state = models.CharField(max_length=8, choices=State.choices, default=State.SENT)
    requested_by = models.CharField(max_length=32, help_text="schedule (Celery beat), admin or manage.py")
    requested_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    run_options = models.JSONField(default=dict, blank=True, help_text="the nightly run requested on the build: size, suite, workloads ...")
    version = models.CharField(max_length=100, blank=True, help_text="the torch version the worker resolved")
    build = models.ForeignKey(Build, on_delete=models.SET_NULL, null=True, blank=True, related_name="intakes")
    hostname = models.CharField(max_length=255, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    python = models.CharField(max_length=1000, blank=True, help_text="the environment's interpreter on that host")
    cached = models.BooleanField(null=True, help_text="found made before (the same version again)")
    seconds = models.FloatField(null=True, blank=True, help_text="to take it in on the worker")
    error = models.TextField(blank=True)
    log = models.TextField(blank=True, help_text="what the installer said (its last 20,000 characters)")
    pruned = models.JSONField(default=list, blank=True, help_text="environments the worker removed (keep N)")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                            help_text="the class's nightly run requested on the build")

    class Meta:
        indexes = [models.Index(fields=["machine_class", "-requested_at"], name="intake_class_newest")]
        ordering = ["-requested_at", "-id"]

    def __str__(self) -> str:
        return f"intake {self.id} on {self.machine_class}: {self.get_state_display()}{' ' + self.version if self.version else ''}"
