"""Quotas per write token (issue #46 item 6: 100 run requests in 4.5 s queued 400 cases, one
request 3,480 cases, 15 cancel-and-restart cycles of a bisection 604 runs in 20 s). Documented with
their ranges in docs/api-limits.md; each refusal is a 429 naming the setting that bounds it:

- ``API_TOKEN_WRITES_PER_MINUTE``: writes (POST, PUT, PATCH, DELETE) one token makes per calendar
  minute, counted atomically in the ``throttle`` cache (Redis when the broker is Redis);
- ``API_TOKEN_MAX_OPEN_CASES``: cases queued or running of the runs one token requested; a request
  that would pass it creates nothing;
- ``API_TOKEN_MAX_BISECTIONS``: bisections one token has running at once;
- ``ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN``: bytes of the artifacts one token uploaded within
  ``ARTIFACT_ORPHAN_HOURS`` that no result references yet (the store-wide bound,
  ``ARTIFACT_UNREFERENCED_MAX_BYTES``, is checked too: one token alone cannot reach it; it is counted
  under one store-wide lock, ``unreferenced_uploads_lock``, so uploads of different tokens at once
  cannot pass it together).

The dashboard's own work (nightly runs, the admin, a bisection started automatically) is not a
token's and is not counted."""
from __future__ import annotations

import logging
import time

from django.apps import apps
from django.conf import settings
from django.core.cache import caches
from django.db import connection
from rest_framework import exceptions, status

from dashboard.api.models import ApiToken
from dashboard.results.artifacts import unreferenced_bytes
from dashboard.results.models import Artifact
from dashboard.dispatch.models import CaseTask

log = logging.getLogger(__name__)
WINDOW_S = 60


class OverQuota(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS

    def __init__(self, field: str, message: str, wait: int | None = None):
        super().__init__(message)
        self.field, self.wait = field, wait


def writes_count(*, token: ApiToken) -> None:
    """Count one write of ``token``; OverQuota past ``API_TOKEN_WRITES_PER_MINUTE`` this minute."""
    limit = settings.API_TOKEN_WRITES_PER_MINUTE
    now = time.time()
    key = f"api-writes:{token.pk}:{int(now // WINDOW_S)}"
    cache = caches["throttle"]
    try:
        cache.add(key, 0, timeout=2 * WINDOW_S)
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        return
    except Exception:  # noqa: BLE001 (the cache down must not stop writes: logged)
        log.exception("write quota: cache unreachable")
        return
    if count > limit:
        wait = max(1, int(WINDOW_S - now % WINDOW_S))
        raise OverQuota("Authorization", f"token {token.prefix}… ({token.name}) made {limit} writes this minute "
                        f"(API_TOKEN_WRITES_PER_MINUTE {limit}); try again in {wait} s", wait=wait)


def token_lock(token: ApiToken) -> None:
    """Hold ``token``'s row until the caller's transaction ends: its quota checks do not race."""
    if token is None:
        return
    ApiToken.objects.select_for_update().filter(pk=token.pk).first()


def open_cases_check(*, token: ApiToken) -> None:
    """OverQuota when the runs ``token`` requested have more than ``API_TOKEN_MAX_OPEN_CASES`` cases
    queued or running (called in the request's transaction, after its cases were planned)."""
    limit = settings.API_TOKEN_MAX_OPEN_CASES
    open_cases = CaseTask.objects.filter(run__api_owner__token=token, state__in=CaseTask.OPEN_STATES).count()
    if open_cases > limit:
        raise OverQuota("workloads", f"this request would leave {open_cases} cases queued or running for token "
                        f"{token.prefix}… ({token.name}); API_TOKEN_MAX_OPEN_CASES is {limit}: wait for its runs, "
                        "cancel some, or request fewer cases")


def bisections_check(*, requested_by: str) -> None:
    """OverQuota when ``requested_by`` (a token's actor) already has ``API_TOKEN_MAX_BISECTIONS`` running."""
    limit = settings.API_TOKEN_MAX_BISECTIONS
    Bisection = apps.get_model("regressions", "Bisection")  # noqa: N806 (the API imports regressions when first used)
    running = Bisection.objects.filter(requested_by=requested_by, status=Bisection.Status.RUNNING).count()
    if running >= limit:
        raise OverQuota("regression_id", f"{requested_by} has {running} bisections running; API_TOKEN_MAX_BISECTIONS is "
                        f"{limit}: wait for one to finish or cancel one")


# The PostgreSQL advisory lock key under which new uploads are counted against the store-wide bound.
UNREFERENCED_UPLOADS_LOCK = 0x70746261  # "ptba"


def unreferenced_uploads_lock() -> None:
    """Hold the store-wide count of uploads no result references until the caller's transaction
    ends: on PostgreSQL a transaction-level advisory lock (another token's upload waits for this
    one's commit, then counts it); SQLite's IMMEDIATE transactions write one at a time already.
    Taken after ``token_lock``, always in that order."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [UNREFERENCED_UPLOADS_LOCK])


def unreferenced_uploads_check(*, token: ApiToken | None, size: int) -> None:
    """OverQuota when storing ``size`` more bytes would put the uploads no result references yet
    (stored within ``ARTIFACT_ORPHAN_HOURS``) past ``ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN`` for
    ``token``, or past ``ARTIFACT_UNREFERENCED_MAX_BYTES`` for the whole store. Called with the
    token's row locked (``token_lock``) and the store-wide count held (``unreferenced_uploads_lock``),
    in the transaction that records the upload."""
    hours = settings.ARTIFACT_ORPHAN_HOURS
    advice = "send the run documents that reference them first, or wait for prune_artifacts to expire them"
    if token is not None:
        limit = settings.ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN
        mine = unreferenced_bytes(hours=hours, among=Artifact.objects.filter(api_uploader__token=token))
        if mine + size > limit:
            raise OverQuota("body", f"token {token.prefix}… ({token.name}) uploaded {mine} bytes of artifacts that no result "
                            f"references yet in the last {hours:g} h; with these {size} bytes it would pass "
                            f"ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN {limit}: {advice}")
    limit = settings.ARTIFACT_UNREFERENCED_MAX_BYTES
    waiting = unreferenced_bytes(hours=hours)
    if waiting + size > limit:
        raise OverQuota("body", f"{waiting} bytes of artifacts that no result references yet were uploaded in the last "
                        f"{hours:g} h; ARTIFACT_UNREFERENCED_MAX_BYTES is {limit}: {advice}")
