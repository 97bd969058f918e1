"""Whole-page cache of the overview, workload, compare and backed-vs-unbacked pages (#17, under
load): a page is rendered once per version of the data and served from Django's cache framework
until the data changes.

The version is the ingest path's counter (``pages_version_bump``, called when an ingest commits:
enough where the cache is shared, e.g. Redis) together with a fingerprint of the newest rows (the
newest result, run, finding, triage step and intake: one query of index-only reads), so a per-process cache
(LocMemCache under several gunicorn workers, an ``ingest`` run from another process) never serves
a page older than the data either. ``PAGE_CACHE_SECONDS`` bounds what the fingerprint cannot see
(a run cancelled without results).

Where the broker is Redis the cache is Redis (settings.CACHES): every web process serves the copy
one of them rendered. A page not cached yet is rendered once (#46 item 13): the first request takes
a lock in the cache (an atomic add) and renders; the others asking for the same page meanwhile wait
for its copy (at most ``PAGE_CACHE_WAIT_SECONDS``, or until the lock is gone without a copy: then
they render it themselves), instead of every worker rendering the same page at once on the same
cores. The cache unreachable, pages are rendered on every request (and it is logged)."""
from __future__ import annotations

import functools
import hashlib
import logging
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection

from dashboard.results.models import Result, Run

log = logging.getLogger(__name__)

VERSION_KEY = "ptbench:pages:version"
WAIT_POLL_S = 0.02  # how often a request waiting for another's rendering looks for its copy


def pages_version_bump() -> None:
    """Called by the ingest path once its transaction commits: every cached page is stale."""
    try:
        try:
            cache.incr(VERSION_KEY)
        except ValueError:  # not set yet (or evicted)
            cache.set(VERSION_KEY, 1, None)
    except Exception:  # noqa: BLE001 (the cache down: the rows' fingerprint still tells the pages; the ingest stands)
        log.warning("page cache unreachable: version not bumped", exc_info=True)


# The newest rows the pages show, as (model, column): the newest result and run here; the apps above
# results add theirs from their AppConfig.ready (findings, triage steps, intakes): results imports none.
NEWEST_COLUMNS: list[tuple[type, str]] = [(Result, "id"), (Run, "ingested_at")]


def fingerprint_columns_add(model, *fields: str) -> None:
    """Add the newest values of ``model``'s ``fields`` (indexed: each an index-only read) to the pages'
    fingerprint (once)."""
    for column in ((model, field) for field in fields):
        if column not in NEWEST_COLUMNS:
            NEWEST_COLUMNS.append(column)


def data_fingerprint() -> str:
    """The cache's version and the newest values of ``NEWEST_COLUMNS``, in one query (each a round
    trip to the database otherwise: under 20 clients on 2 cores every one waits for a core)."""
    quote = connection.ops.quote_name
    newest = ", ".join(f"(SELECT MAX({quote(model._meta.get_field(field).column)}) FROM {quote(model._meta.db_table)})"
                       for model, field in NEWEST_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {newest}")  # names from the models' own metadata
        parts = [cache.get(VERSION_KEY, 0), *cursor.fetchone()]
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:16]


def cached_page(view):
    """Serve a GET's successful response from the cache, keyed by the full path, the data's version
    and the signed-in user's name (the page's header says who it is)."""
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        seconds = settings.PAGE_CACHE_SECONDS
        if request.method != "GET" or not seconds:
            return view(request, *args, **kwargs)
        # the header names who is signed in (or links "sign in"): one copy per reader kind
        user = getattr(request, "user", None)
        who = user.get_username() if user is not None and user.is_authenticated else ""
        try:
            key = "ptbench:page:" + hashlib.sha1(f"{data_fingerprint()} {request.get_full_path()} {who}".encode()).hexdigest()
            response = cache.get(key)
        except Exception:  # noqa: BLE001 (the cache down must not take the pages with it)
            log.warning("page cache unreachable: %s rendered uncached", request.path, exc_info=True)
            return view(request, *args, **kwargs)
        if response is None:
            response = _render_once(key, seconds, lambda: view(request, *args, **kwargs))
        return response
    return wrapped


def _render_once(key: str, seconds: int, render: Callable):
    """The page of ``key`` rendered by one request at a time: the lock's holder renders and stores
    it, a request finding the lock taken waits for the stored copy."""
    lock = key + ":rendering"
    wait = settings.PAGE_CACHE_WAIT_SECONDS
    try:
        mine = cache.add(lock, 1, timeout=max(1, math.ceil(wait)))  # gone by itself if its holder dies
    except Exception:  # noqa: BLE001
        log.warning("page cache unreachable: rendered uncached", exc_info=True)
        return render()
    if not mine:
        response = _wait_for(key, lock, until=time.monotonic() + wait)
        if response is not None:
            return response
    try:
        response = render()
        if response.status_code == 200 and not response.streaming:
            try:
                cache.set(key, response, seconds)
            except Exception:  # noqa: BLE001 (served all the same)
                log.warning("page cache unreachable: page not stored", exc_info=True)
    finally:
        if mine:
            try:
                cache.delete(lock)
            except Exception:  # noqa: BLE001 (expires with its timeout)
                log.warning("page cache unreachable: lock left to expire", exc_info=True)
    return response


def _wait_for(key: str, lock: str, *, until: float):
    """The copy another request is rendering, once stored; None when its lock went without one (its
    page was no 200, or its process died) or ``until`` passed: the caller renders it then."""
    try:
        while time.monotonic() < until:
            time.sleep(WAIT_POLL_S)
            response = cache.get(key)
            if response is not None:
                return response
            if not cache.has_key(lock):
                return cache.get(key)
    except Exception:  # noqa: BLE001
        log.warning("page cache unreachable while waiting", exc_info=True)
    return None
