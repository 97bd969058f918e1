"""Writes of the API (docs/architecture.md, conventions: ``<entity>_<action>``, keyword-only, atomic).

Tokens, build registration, run requests (create / cancel) and run submission. Results enter only
through the pipeline (``dashboard.pipeline.services.run_ingest_and_detect``).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import secrets
import uuid

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from dashboard.api.models import ApiToken, ArtifactUploader, RunOwner
from dashboard.api.quotas import open_cases_check, token_lock, unreferenced_uploads_check, unreferenced_uploads_lock
from dashboard.dispatch.services import BaseNotProbed, run_cancel_open, variant_overrides_validate
from dashboard.dispatch.services import run_request as dispatch_run_request
from dashboard.dispatch.services.planning import matrix_resolve, run_plan
from dashboard.results.artifacts import artifact_store, artifacts_stored
from dashboard.results.models import Artifact, Build, Machine, Run
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.results.services import IngestOutcome, build_get_or_create
from dashboard.results.run_status import run_status_set
from dashboard.results.variants import overrides_of_document, variant_document
from dashboard.results.services import variant_get_or_create
from contract.settings_policy import DATA_ONLY
from contract.document import DocumentError, InvalidDocument, load_document
from contract.vocabulary import is_machine_class

TOKEN_PREFIX = "ptb_"
# A run requested through the API has no host until a runner picks it up: it waits on this
# placeholder machine of its class; the submitted run document then names the real host.
UNASSIGNED_HOST = "(unassigned)"
OPEN_STATUSES = (Run.Status.PENDING, Run.Status.RUNNING)
FINAL_STATUSES = (Run.Status.COMPLETED, Run.Status.FAILED, Run.Status.CANCELLED)
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)  # at most one write per token per minute


class Conflict(Exception):
    """A write that contradicts the stored state (answered 409), naming the field at fault."""

    status = 409

    def __init__(self, field: str, message: str, *, more: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.field, self.message = field, message
        self.errors = [(field, message), *more]  # every field at fault, the first one first


class NotOwner(Conflict):
    """A write to what another token (or the dashboard itself) created: answered 403 naming the field."""

    status = 403


# --- ownership (issue #46 item 6) -------------------------------------------------------------------
def run_owner(*, run: Run) -> ApiToken | None:
    """The token that created ``run`` through the API; None for the dashboard's own runs (nightly,
    bisection, the admin, a worker's document through the broker, ``manage.py ingest``). A run
    requested before owners were recorded is its requester's (``requested_by`` ``api:<name>``)."""
    owner = RunOwner.objects.select_related("token").filter(run=run).first()
    if owner is not None:
        return owner.token
    name = run.requested_by.removeprefix("api:") if run.requested_by.startswith("api:") else None
    return ApiToken.objects.filter(name=name).first() if name else None


def run_owner_check(*, run: Run, token: ApiToken | None, field: str, doing: str) -> None:
    """Raise ``NotOwner`` naming ``field`` unless ``token`` (None: not through the API) created ``run``."""
    if token is None:
        return
    owner = run_owner(run=run)
    if owner is None or owner.pk != token.pk:
        who = f"token {owner.name!r}" if owner is not None else f"the dashboard ({run.requested_by or run.reason})"
        raise NotOwner(field, f"run {run.id} was created by {who}: only the token that created a run may {doing}")


# --- tokens ----------------------------------------------------------------------------------------
def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def api_token_create(*, name: str, can_write: bool = True, note: str = "", created_by: str = "") -> tuple[ApiToken, str]:
    """Create a token; returns it and its secret, which is not stored and cannot be shown again."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        name=name, prefix=secret[: len(TOKEN_PREFIX) + 6], key_hash=token_hash(secret), can_write=can_write,
        note=note, created_by=created_by,
    )
    return token, secret


def api_token_revoke(*, token_ids: list[int]) -> int:
    """Revoke tokens (idempotent: a revoked token keeps its first revocation time)."""
    return ApiToken.objects.filter(pk__in=token_ids, revoked_at__isnull=True).update(revoked_at=timezone.now())


def api_token_touch(*, token: ApiToken) -> None:
    """Record that a token was used, at most once a minute (no write on every request)."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


# --- builds ----------------------------------------------------------------------------------------
def _variant_validate(*, base: Build | None, overrides, machine_class: str = "", base_name: str = "") -> None:
    """A variant's config keys against its base build's torch (``dispatch``): InvalidDocument naming
    each bad key (400), or Conflict naming ``config`` (409) while the base was never probed."""
    try:
        variant_overrides_validate(base=base, overrides=overrides, machine_class=machine_class, base_name=base_name)
    except BaseNotProbed as exc:
        raise Conflict(exc.field, exc.message) from None


def build_register(*, data: dict, overrides=None) -> tuple[Build, bool]:
    """Register a build (the ``build`` object of a run document); idempotent on (git_sha,
    local_label). Uses the ingest service's own function, so a build registered here is the same
    row a run document would create. With ``overrides``, the variant of the build ``data`` names
    (its base), its config keys checked against the base's torch first. Raises ``InvalidDocument``
    naming the field (the sha stored with another torch version, a bad key), or ``Conflict``."""
    if overrides:
        base = Build.objects.filter(git_sha=data["git_sha"], local_label=data.get("local_label", "")).first()
        _variant_validate(base=base, overrides=overrides,
                          base_name=f"{data['git_sha'][:12]}{'+' + data['local_label'] if data.get('local_label') else ''}")
        data = variant_document(data, overrides)
    with transaction.atomic():
        before = Build.objects.filter(git_sha=data["git_sha"], local_label=data.get("local_label", "")).exists()
        try:
            build = build_get_or_create(data)
        except InvalidDocument as exc:  # its fields are named inside a run document: "build.<field>"
            raise InvalidDocument([DocumentError(e.field.removeprefix("build."), e.message) for e in exc.errors]) from None
        if before and (differ := _build_differences(build, data)):
            first, *more = differ
            raise Conflict(*first, more=tuple(more))
    return build, not before


# What a re-post of a registered build may not change (given empty or null: not said, not compared).
REGISTERED_FIELDS = ("label", "triton_version", "cuda_version", "python_version")


def _build_differences(build: Build, data: dict) -> list[tuple[str, str]]:
    """(field, message) for each field ``data`` gives that contradicts the registered ``build``."""
    ref = build.git_sha[:12] + (f"+{build.local_label}" if build.local_label else "")
    return [(name, f"{data[name]!r} contradicts the registered build {ref} ({name} {getattr(build, name)!r}); "
                   "a different build needs its own local_label")
            for name in REGISTERED_FIELDS if data.get(name) and data[name] != getattr(build, name)]


# --- runs ------------------------------------------------------------------------------------------
def api_run_request(*, build: Build, machine_class: str, size: str, requested_by: str, suite: str | None = None,
                cases_expected: int | None = None,
                hostname: str = "", notes: str = "", dispatch: bool = True, workloads=None, modes=None, regimes=None,
                dtypes=None, timeout_s: float | None = None, overrides=None, idempotency_key: str = "",
                reason: str = "requested", dims=None, token: ApiToken | None = None) -> tuple[Run, bool]:
    """The API's run request (one token's: idempotency, ownership, quotas) around the dispatch app's
    ``run_request``, which every other requester calls directly.
    A pending run of ``build`` on a machine of ``machine_class``; its cases go to the runner
    workers of the class (``dashboard.dispatch``), or, with ``dispatch=False``, it waits for an
    outside runner to submit its document; with ``overrides`` (``contract.variants.Overrides``),
    a run of ``build``'s variant. Raises ``MatrixError`` naming the bad field.
    With an ``idempotency_key`` that this requester sent before, the run that request created is
    answered instead (created: False), whatever the rest of the request says."""

    def earlier() -> Run | None:
        return Run.objects.filter(requested_by=requested_by, idempotency_key=idempotency_key).first() if idempotency_key else None

    if (run := earlier()) is not None:
        return run, False
    if not dispatch:  # nothing planned, but the request is checked in full all the same (size, suite, workloads...)
        run_plan(size=size, matrix=matrix_resolve(
            size=size, suite=suite, machine_class=machine_class, workloads=workloads, modes=modes, regimes=regimes, dtypes=dtypes,
            timeout_s=timeout_s, default_timeout_s=settings.DISPATCH_CASE_TIMEOUT_S, dims=dims))
    if overrides:  # a run of the variant of ``build`` (created when new), its keys checked first
        _variant_validate(base=build, overrides=overrides, machine_class=machine_class)
        build = variant_get_or_create(base=build, overrides=overrides)
    try:
        with transaction.atomic():
            if token is not None:
                token_lock(token)  # this token's requests one at a time: the quota below does not race
            run = dispatch_run_request(
                build=build, machine_class=machine_class, size=size, suite=suite, requested_by=requested_by, workloads=workloads,
                modes=modes, regimes=regimes, dtypes=dtypes, timeout_s=timeout_s, hostname=hostname or UNASSIGNED_HOST, notes=notes,
                dispatch=dispatch, cases_expected=cases_expected, idempotency_key=idempotency_key, reason=reason, dims=dims,
            )
            if token is not None:
                RunOwner.objects.create(run=run, token=token)
                open_cases_check(token=token)  # past API_TOKEN_MAX_OPEN_CASES: 429, nothing created or sent
        return run, True
    except IntegrityError:
        if (run := earlier()) is None:  # not a concurrent request with the same key
            raise
        return run, False


def run_cancel(*, run_id: uuid.UUID, cancelled_by: str, token: ApiToken | None = None) -> Run:
    """Cancel a pending or running run. Raises ``Run.DoesNotExist``, ``NotOwner`` (403) when
    ``token`` did not create it, or ``Conflict`` when finished."""
    with transaction.atomic():
        run = Run.objects.select_for_update(of=("self",)).select_related("machine").get(pk=run_id)
        run_owner_check(run=run, token=token, field="run_id", doing="cancel it (the admin can cancel any run)")
        if run.status == Run.Status.CANCELLED:
            return run
        if not run_cancel_open(run=run, cancelled_by=cancelled_by):
            raise Conflict("status", f"run {run.id} is {run.status}: only a pending or running run can be cancelled")
        run.refresh_from_db()
    return run


def _peek(document: dict, *path: str):
    """A value of a not yet validated document, or None where it is absent or of another shape."""
    value = document
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def run_submit(*, body: bytes, submitted_by: str, complete: bool = True, token: ApiToken | None = None) -> tuple[IngestOutcome, Run]:
    """Store a finished run's document through ``run_ingest``, all or nothing.

    A run requested through the API (same ``run.id``, still pending or running) takes the host the
    document names (of the machine class it was requested for) and becomes completed, or running
    when ``complete`` is false (a partial document; post the rest later under the same id).
    Raises ``InvalidDocument`` naming every bad field. A run that exists already takes documents
    from the token that created it only (``NotOwner``, 403 naming ``run.id``); a completed run takes
    no new results (``Conflict``, 409), though the same document posted again is answered as before.
    """
    document = load_document(body, max_bytes=settings.INGEST_MAX_DOCUMENT_BYTES)
    _settings_of_client_check(document)
    with transaction.atomic():
        existing = _existing_run(document)
        if existing is not None:
            run_owner_check(run=existing, token=token, field="run.id", doing="post its documents")
        outcome = run_ingest_and_detect(document=document, size_bytes=len(body), prepare=_attach_requested)
        if existing is not None and existing.status == Run.Status.COMPLETED and outcome.results_created:
            raise Conflict("run.id", f"run {existing.id} is completed: its results are final (post a run in parts with "
                                     "complete=false before its last part)")
        run = Run.objects.select_related("build", "machine").get(pk=outcome.run_id)
        if outcome.created and token is not None:
            RunOwner.objects.create(run=run, token=token)
        if outcome.created and not run.requested_by:
            run.requested_by = submitted_by  # who posted it, when the document does not say who asked
            run.save(update_fields=["requested_by"])
        wanted = Run.Status.COMPLETED if complete else Run.Status.RUNNING
        # A requested or partly posted run moves on; a new run posted as partial is running.
        if run.status != wanted and (run.status in OPEN_STATUSES or outcome.created):
            run_status_set(
                run=run, status=wanted,
                started_at=run.started_at or _time(_peek(document, "run", "started_at")) or timezone.now(),
                finished_at=(_time(_peek(document, "run", "finished_at")) or timezone.now()) if complete else None,
            )
    return outcome, run


def _settings_of_client_check(document) -> None:
    """A document posted here defines its variant's settings: only data (issue #33,
    ``contract.settings_policy``); raises ``InvalidDocument`` naming ``build.overrides.env.NAME``.
    A worker's document (through the broker) records what the worker checked and ran."""
    build = _peek(document, "build")
    if isinstance(build, dict) and isinstance(build.get("overrides"), dict):
        overrides_of_document(build, allow=DATA_ONLY)


def _time(value) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None


def _attach_requested(document: dict) -> None:
    """Before a document is stored: a run requested through the API moves to the document's host."""
    requested = _requested_run(document)
    if requested is not None:
        _attach_host(requested, document)


def _document_run_id(document) -> uuid.UUID | None:
    run_id = _peek(document, "run", "id")
    try:
        return uuid.UUID(run_id) if isinstance(run_id, str) else None
    except ValueError:
        return None


def _existing_run(document) -> Run | None:
    """The stored run a document's ``run.id`` names, locked, if any."""
    run_id = _document_run_id(document)
    return Run.objects.select_for_update(of=("self",)).filter(pk=run_id).first() if run_id else None


def _requested_run(document: dict) -> Run | None:
    run_id = _document_run_id(document)
    if run_id is None:
        return None
    return Run.objects.select_for_update(of=("self",)).select_related("machine").filter(pk=run_id, status__in=OPEN_STATUSES).first()


def _attach_host(run: Run, document: dict) -> None:
    """Move a requested run from its placeholder (or another) host to the one the document names."""
    hostname, machine_class = _peek(document, "machine", "hostname"), _peek(document, "machine", "machine_class")
    if not (isinstance(hostname, str) and 0 < len(hostname) <= 255 and isinstance(machine_class, str)
            and is_machine_class(machine_class)):
        return  # run_ingest names what is wrong
    if machine_class != run.machine.machine_class:
        raise InvalidDocument([DocumentError(
            "machine.machine_class", f"run {run.id} was requested for machine class {run.machine.machine_class!r}, not {machine_class!r}"
        )])
    if hostname != run.machine.hostname:
        machine, _ = Machine.objects.get_or_create(hostname=hostname, machine_class=machine_class)
        run.machine = machine
        run.save(update_fields=["machine"])


def artifact_upload(*, raw: bytes, sha256: str, name: str, token: ApiToken | None) -> tuple[Artifact, bool]:
    """Store an uploaded artifact for ``token`` (row, created). New bytes are counted against the
    bounds on uploads no result references yet (``unreferenced_uploads_check``: 429 past one) with
    the token's row locked and the store-wide count held, so concurrent uploads (of one token or of
    several) cannot pass a bound together; bytes stored already are no new upload. Raises
    ``ArtifactRefused`` (nothing kept) for wrong bytes."""
    with transaction.atomic():
        token_lock(token)
        if not artifacts_stored(sha256s=[sha256]):
            unreferenced_uploads_lock()  # then again: another token may have stored the same bytes meanwhile
            if not artifacts_stored(sha256s=[sha256]):
                unreferenced_uploads_check(token=token, size=len(raw))
        artifact, created = artifact_store(source=io.BytesIO(raw), sha256=sha256, name=name)
        if created and token is not None:
            ArtifactUploader.objects.get_or_create(artifact=artifact, defaults={"token": token})
    return artifact, created
