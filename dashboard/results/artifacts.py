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
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from contract.artifacts import SHA256, name_error, path_error, sha256_error
from contract.document import DocumentError, InvalidDocument
from dashboard.results.models import Artifact, Result
from dashboard.results.page_cache import pages_version_bump

CHUNK = 1024 * 1024
RATIO_FLOOR_BYTES = 1024 * 1024  # the ratio bound applies past this much expanded (a tiny file may compress 1000x)


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


def gzip_problem(raw: bytes, *, max_expanded: int, max_ratio: float) -> str | None:
    """Why ``raw`` (a gzip file) must not be stored, or None: it does not decompress, or it expands
    past ``max_expanded`` bytes or ``max_ratio`` times its size (a gzip bomb: 16 MiB can hold 16 GiB
    of zeros, and the pages tell people to decompress what they download). Decompressed in bounded
    steps, never whole; every member of a multi-member file counts."""
    limit = min(max_expanded, max(RATIO_FLOOR_BYTES, int(max_ratio * len(raw))))
    expanded, data = 0, raw
    try:
        while data:
            inflater = zlib.decompressobj(wbits=31)
            chunk = inflater.decompress(data, CHUNK)
            while chunk:
                expanded += len(chunk)
                if expanded > limit:
                    return (f"expands past {limit} bytes (ARTIFACT_MAX_EXPANDED_BYTES {max_expanded}, "
                            f"ARTIFACT_MAX_RATIO {max_ratio:g} x its {len(raw)} bytes): refused as a gzip bomb")
                chunk = inflater.decompress(inflater.unconsumed_tail, CHUNK)
            if not inflater.eof:
                return "not a complete gzip file (it ends before its end)"
            data = inflater.unused_data.lstrip(b"\0")  # another member, or the padding some writers add
    except zlib.error as exc:
        return f"not a readable gzip file ({exc})"
    return None


@dataclass(frozen=True)
class PruneOutcome:
    deleted: int
    freed_bytes: int
    kept: int
    kept_bytes: int


def unreferenced_bytes(*, hours: float, now: dt.datetime | None = None, among: QuerySet[Artifact] | None = None) -> int:
    """Bytes of the artifacts stored within the last ``hours`` that no result references (uploads
    whose run document has not come, or never will: older ones ``prune_artifacts`` deletes); only
    those of ``among`` when given (one token's uploads)."""
    since = (now or timezone.now()) - dt.timedelta(hours=hours)
    artifacts = Artifact.objects.all() if among is None else among
    recent = dict(artifacts.filter(stored_at__gte=since).values_list("pk", "size_bytes"))
    referenced = artifacts_referenced(recent)
    return sum(size for sha, size in recent.items() if sha not in referenced)


def artifacts_referenced(sha256s: Iterable[str], *, batch: int = 500) -> set[str]:
    """Those of ``sha256s`` that some result references (``Result.artifact["sha256"]``)."""
    wanted, found = list(sha256s), set()
    for start in range(0, len(wanted), batch):
        found.update(Result.objects.filter(artifact__sha256__in=wanted[start:start + batch])
                     .values_list("artifact__sha256", flat=True).distinct())
    return found


def artifact_prune(*, older_than_days: float | None = None, max_total_bytes: int | None = None,
                   orphans_older_than_hours: float | None = None, now: dt.datetime | None = None) -> PruneOutcome:
    """Delete the artifacts stored more than ``older_than_days`` ago, and those no result references
    stored more than ``orphans_older_than_hours`` ago; then, until the rest total at most
    ``max_total_bytes``: the unreferenced ones (oldest first) before any a result references (oldest
    first). A referenced trace is never deleted for room while junk remains (issue #46: the newest
    junk was kept and a referenced trace deleted)."""
    now = now or timezone.now()
    everything = list(Artifact.objects.order_by("stored_at", "pk"))
    referenced = artifacts_referenced([a.pk for a in everything])
    doomed: list[Artifact] = []
    for artifact in everything:
        too_old = older_than_days is not None and artifact.stored_at < now - dt.timedelta(days=older_than_days)
        orphan_expired = (orphans_older_than_hours is not None and artifact.pk not in referenced
                          and artifact.stored_at < now - dt.timedelta(hours=orphans_older_than_hours))
        if too_old or orphan_expired:
            doomed.append(artifact)
    gone = {a.pk for a in doomed}
    rest = [a for a in everything if a.pk not in gone]
    if max_total_bytes is not None:
        total = sum(a.size_bytes for a in rest)
        # Junk first, then the referenced; each oldest first.
        for artifact in sorted(rest, key=lambda a: (a.pk in referenced, a.stored_at, a.pk)):
            if total <= max_total_bytes:
                break
            doomed.append(artifact)
            total -= artifact.size_bytes
        gone = {a.pk for a in doomed}
        rest = [a for a in rest if a.pk not in gone]
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
