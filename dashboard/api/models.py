"""API tokens: one per CI system, created in the admin, stored hashed, revocable."""
from __future__ import annotations

from django.db import models

from dashboard.results.models import Artifact, Run


class ApiToken(models.Model):
    """A secret that lets one CI system write through the API.

    Only ``key_hash`` (sha256 of the secret) is stored; the admin shows the secret once, when the
    token is created. ``prefix`` (the secret's first characters) tells tokens apart in lists and
    logs without revealing them. A revoked token (``revoked_at`` set) is refused with 401.
    """

    name = models.CharField(max_length=100, unique=True, help_text="the CI system that uses it, e.g. 'nightly-gha'")
    prefix = models.CharField(max_length=16, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False, help_text="sha256 of the secret, hex")
    can_write = models.BooleanField(default=True, help_text="off: a read-only token (for API_READS_REQUIRE_TOKEN)")
    note = models.TextField(blank=True)
    created_by = models.CharField(max_length=150, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…{', revoked' if self.revoked_at else ''})"


class RunOwner(models.Model):
    """The token that created a run through the API (``POST /runs/``, or the first document posted
    under its id): only that token may post the run's documents or cancel it (issue #46 item 6)."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, primary_key=True, related_name="api_owner")
    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="runs")

    def __str__(self) -> str:
        return f"run {self.run_id} of {self.token.name}"



class ArtifactUploader(models.Model):
    """The token that first uploaded an artifact (``PUT /artifacts/<sha256>/``): its uploads no
    result references count against ``ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN``, so one token
    cannot fill the store and lock every other token out of uploading (issue #46 item 10)."""

    artifact = models.OneToOneField(Artifact, on_delete=models.CASCADE, primary_key=True, related_name="api_uploader")
    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="artifacts_uploaded")

    def __str__(self) -> str:
        return f"artifact {self.artifact_id} of {self.token.name}"
