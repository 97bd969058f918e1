"""Whole-page cache of the overview, workload, compare and backed-vs-unbacked pages (#17, under
load): a page is rendered once per version of the data and served from Django's cache framework
until the data changes.

The version is the ingest path's counter (``pages_version_bump``, called when an ingest commits:
enough where the cache is shared, e.g. Redis) together with a fingerprint of the newest rows (the
newest result, run, finding and triage step: four index-only reads), so a per-process cache
(LocMemCache under several gunicorn workers, an ``ingest`` run from another process) never serves
a page older than the data either. ``PAGE_CACHE_SECONDS`` bounds what the fingerprint cannot see
(a run cancelled without results)."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db.models import Max

from dashboard.results.models import Result, Run

VERSION_KEY = "ptbench:pages:version"


def pages_version_bump() -> None:
    """Called by the ingest path once its transaction commits: every cached page is stale."""
    try:
        cache.incr(VERSION_KEY)
    except ValueError:  # not set yet (or evicted)
        cache.set(VERSION_KEY, 1, None)


# The newest rows of the apps above results that the pages show (the regressions app adds its
# findings and triage steps from its AppConfig.ready): results imports none of them.
FINGERPRINT_PARTS: list[Callable[[], list]] = []


def fingerprint_part_add(part: Callable[[], list]) -> None:
    """Add the newest-rows read of an app above results to the pages' fingerprint (once)."""
    if part not in FINGERPRINT_PARTS:
        FINGERPRINT_PARTS.append(part)


def data_fingerprint() -> str:
    parts = [cache.get(VERSION_KEY, 0),
             Result.objects.aggregate(m=Max("id"))["m"], Run.objects.aggregate(m=Max("ingested_at"))["m"]]
    for part in FINGERPRINT_PARTS:
        parts += part()
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
        key = "ptbench:page:" + hashlib.sha1(f"{data_fingerprint()} {request.get_full_path()} {who}".encode()).hexdigest()
        response = cache.get(key)
        if response is None:
            response = view(request, *args, **kwargs)
            if response.status_code == 200 and not response.streaming:
                cache.set(key, response, seconds)
        return response
    return wrapped
