"""The artifact store: files cases kept (their TORCH_TRACE logs), on disk under ARTIFACT_ROOT by
sha256, one ``Artifact`` row each (docs/artifacts.md).

A file is written under a temporary name, checked against the sha256 it was announced with, then
renamed into place and recorded in one transaction: a bad or interrupted upload leaves nothing.
Files are content-addressed, so a second upload of the same bytes stores nothing twice.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract.artifacts import SHA256, name_error, path_error, sha256_error
from contract.document import DocumentError, InvalidDocument
from dashboard.results.models import Artifact
from dashboard.results.page_cache import pages_version_bump

CHUNK = 1024 * 1024


class ArtifactRefused(ValueError):
    """The bytes are not the announced file (``field`` names what is wrong)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def artifact_path(sha256: str) -> Path:
    """Where the file of ``sha256`` lies (only for a validated sha256: no path can be built from
    anything else)."""
    if not SHA256.fullmatch(sha256):
        raise ValueError(f"not a sha256: {sha256!r}")
    return Path(settings.ARTIFACT_ROOT) / sha256[:2] / sha256


@transaction.atomic
def artifact_store(*, source: BinaryIO, sha256: str, name: str, max_bytes: int | None = None) -> tuple[Artifact, bool]:
    """Store the bytes read from ``source`` as the artifact ``sha256`` named ``name``; (row, created).
    Raises ArtifactRefused (nothing kept) when they are over ``max_bytes`` (``body``) or their sha256
    differs (``sha256``)."""
    limit = settings.ARTIFACT_MAX_BYTES if max_bytes is None else max_bytes
    existing = Artifact.objects.filter(pk=sha256).first()
    if existing is not None and artifact_path(sha256).is_file():
        return existing, False
    final = artifact_path(sha256)
    final.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    handle, temporary = tempfile.mkstemp(dir=final.parent, prefix=".upload-")
    try:
        with os.fdopen(handle, "wb") as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise ArtifactRefused("body", f"the artifact is over {limit} bytes (ARTIFACT_MAX_BYTES)")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256:
            raise ArtifactRefused("sha256", f"the body's sha256 is {digest.hexdigest()}, not {sha256}")
        artifact, _ = Artifact.objects.update_or_create(pk=sha256, defaults={"name": name, "size_bytes": size})
        os.replace(temporary, final)
        transaction.on_commit(pages_version_bump)  # a cached workload page now links the file
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return artifact, True


def artifact_delete(*, artifacts: Iterable[Artifact]) -> int:
    """Delete rows and files; returns the bytes freed. A result keeps its reference (the page then
    says the file was pruned)."""
    freed = 0
    for artifact in artifacts:
        with transaction.atomic():
            Artifact.objects.filter(pk=artifact.pk).delete()
            artifact_path(artifact.pk).unlink(missing_ok=True)
        freed += artifact.size_bytes
    return freed


@dataclass(frozen=True)
class PruneOutcome:
    deleted: int
    freed_bytes: int
    kept: int
    kept_bytes: int


def artifact_prune(*, older_than_days: float | None = None, max_total_bytes: int | None = None,
                   now: dt.datetime | None = None) -> PruneOutcome:
    """Delete the artifacts stored more than ``older_than_days`` ago, then the oldest until the rest
    total at most ``max_total_bytes``."""
    now = now or timezone.now()
    doomed: list[Artifact] = []
    if older_than_days is not None:
        doomed += Artifact.objects.filter(stored_at__lt=now - dt.timedelta(days=older_than_days)).order_by("stored_at")
    rest = list(Artifact.objects.exclude(pk__in=[a.pk for a in doomed]).order_by("-stored_at", "-pk"))
    if max_total_bytes is not None:
        total, keep = 0, []
        for artifact in rest:  # newest first: keep while they fit
            if total + artifact.size_bytes > max_total_bytes:
                doomed.append(artifact)
                continue
            total += artifact.size_bytes
            keep.append(artifact)
        rest = keep
    freed = artifact_delete(artifacts=doomed)
    return PruneOutcome(deleted=len(doomed), freed_bytes=freed, kept=len(rest), kept_bytes=sum(a.size_bytes for a in rest))


def artifacts_stored(*, sha256s: Iterable[str]) -> dict[str, Artifact]:
    """The stored artifacts among ``sha256s``, by sha256 (one query)."""
    wanted = {s for s in sha256s if isinstance(s, str) and SHA256.fullmatch(s)}
    return {a.pk: a for a in Artifact.objects.filter(pk__in=wanted)} if wanted else {}


def artifacts_store_beside(*, document: bytes, directory: Path) -> list[str]:
    """Store the files a run document on disk references beside it (``results[i].artifact.path``,
    relative to ``directory``); returns the sha256 of each file newly stored. A path that would
    leave ``directory`` (``..``, absolute, a link out) or a file whose sha256 differs raises
    InvalidDocument naming the field; a file that is missing is skipped (the page says so)."""
    try:
        parsed = json.loads(document)
    except ValueError:
        return []  # the ingest names what is wrong with it
    results = parsed.get("results") if isinstance(parsed, dict) else None
    root, stored = directory.resolve(), []
    for index, result in enumerate(results if isinstance(results, list) else []):
        reference = result.get("artifact") if isinstance(result, dict) else None
        if not isinstance(reference, dict) or "path" not in reference:
            continue
        where = f"results[{index}].artifact"
        for field, problem in (("path", path_error(reference["path"])), ("sha256", sha256_error(reference.get("sha256"))),
                               ("name", name_error(reference.get("name")))):
            if problem:
                raise InvalidDocument([DocumentError(f"{where}.{field}", problem)])
        file = (root / reference["path"]).resolve()
        if not file.is_relative_to(root):
            raise InvalidDocument([DocumentError(f"{where}.path", "leads out of the run document's directory")])
        if not file.is_file():
            continue
        try:
            with open(file, "rb") as source:
                _, created = artifact_store(source=source, sha256=reference["sha256"], name=reference["name"])
        except ArtifactRefused as exc:
            raise InvalidDocument([DocumentError(f"{where}.{exc.field if exc.field == 'sha256' else 'path'}", str(exc))]) from None
        if created:
            stored.append(reference["sha256"])
    return stored


def results_with_artifacts(results) -> list:
    """The results with ``artifact_stored`` set on each: whether its referenced file is here."""
    results = list(results)
    stored = artifacts_stored(sha256s=[(r.artifact or {}).get("sha256") for r in results if isinstance(r.artifact, dict)])
    for r in results:
        r.artifact_stored = isinstance(r.artifact, dict) and r.artifact.get("sha256") in stored
    return results
