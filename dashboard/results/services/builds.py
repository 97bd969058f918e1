"""Builds: a document's build created if new (a variant is its own build), a base's variant, a build
dated by its first run."""
from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone

from dashboard.results.build_dates import build_time, version_date
from dashboard.results.models import Build, Run
from dashboard.results.selectors.build_refs import label_problem
from dashboard.results.variants import overrides_of_document, overrides_stored, variant_document
from contract.document import LOCAL_LABEL_PATTERN, DocumentError, InvalidDocument
from contract.variants import Overrides
from contract.values import printable


def _parse_time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def build_get_or_create(data: dict) -> Build:
    """The document's build, created if new. A variant (``build.overrides``) is its own build: two
    different sets of overrides under one (git_sha, local_label) are refused."""
    if not re.fullmatch(LOCAL_LABEL_PATTERN, data.get("local_label", "")):  # a probe's or a command line's label too
        raise InvalidDocument([DocumentError("build.local_label", f"{printable(data['local_label'])[:100]!r}: letters, digits "
                                             "and . _ + - only (it is part of the build's ref and URLs)")])
    if problem := label_problem(data.get("label", "")):
        raise InvalidDocument([DocumentError("build.label", problem)])
    overrides = overrides_of_document(data)
    commit_time = _parse_time(data.get("commit_time"))
    build, created = Build.objects.get_or_create(
        git_sha=data["git_sha"],
        local_label=data.get("local_label", ""),
        defaults={
            "torch_version": data["torch_version"],
            "label": data.get("label", ""),
            "commit_time": commit_time,
            # A build registered before any run of it, with no date of its own, waits at the time
            # it was registered until its first run gives one (build_date_from_first_run).
            "ordered_at": build_time(torch_version=data["torch_version"], commit_time=commit_time, first_run_started=None)
            or timezone.now(),
            "triton_version": data.get("triton_version") or "",
            "cuda_version": data.get("cuda_version") or "",
            "python_version": data.get("python_version") or "",
            "environment": data.get("environment", {}),
            "overrides": overrides.as_document() if overrides else {},
        },
    )
    if not created and overrides_stored(build) != overrides:
        raise InvalidDocument([DocumentError(
            "build.overrides",
            f"build {build.git_sha[:12]}+{build.local_label} is stored with other overrides "
            f"({overrides_stored(build).summary() or 'none'}); a variant needs its own local_label",
        )])
    if not created and build.torch_version != data["torch_version"]:
        raise InvalidDocument(
            [
                DocumentError(
                    "build.torch_version",
                    f"{data['torch_version']!r} contradicts the stored build {build.git_sha[:12]} "
                    f"(torch {build.torch_version}); give the build a distinct local_label",
                )
            ]
        )
    return build


def variant_get_or_create(*, base, overrides: Overrides):
    """The variant of ``base`` with ``overrides`` (``base`` itself when there are none)."""
    if not overrides:
        return base
    data = {"torch_version": base.torch_version, "git_sha": base.git_sha, "local_label": base.local_label,
            "label": base.label, "commit_time": base.commit_time.isoformat() if base.commit_time else None,
            "triton_version": base.triton_version, "cuda_version": base.cuda_version,
            "python_version": base.python_version, "environment": base.environment}
    return build_get_or_create(variant_document(data, overrides))


def build_date_from_first_run(*, build: Build, run: Run) -> None:
    """Date a build that has no date of its own (no commit time, no nightly or known release
    version) by the start of its first run; called when a run is created."""
    if build.commit_time is not None or version_date(build.torch_version) is not None or run.started_at is None:
        return
    if Run.objects.filter(build=build).exclude(pk=run.pk).exists():
        return
    Build.objects.filter(pk=build.pk).update(ordered_at=run.started_at)
    build.ordered_at = run.started_at
