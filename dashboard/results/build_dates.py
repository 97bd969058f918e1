"""When a build was made: the time every trend orders builds by (``Build.ordered_at``).

In order of preference: the commit time when the document gives it; the date of a nightly read
from its version (``2.12.0.dev20261121`` -> 2026-11-21); the release date of a release listed in
``RELEASE_DATES``; else the start of its first run (the document's ``run.started_at``). Never the
time it was ingested: sample documents ingested together keep the order they were built in.

``RELEASE_DATES`` is a small hand-kept table of PyTorch releases. The dates are plausible release
days set by the project, not read from an official source; correct them here when a release's
real date is known (and a data migration re-derives the stored builds, as 0004 does).
"""
from __future__ import annotations

import datetime as dt
import re

RELEASE_DATES: dict[str, dt.date] = {
    "2.9.0": dt.date(2025, 10, 15),
    "2.9.1": dt.date(2025, 11, 12),
    "2.10.0": dt.date(2026, 1, 21),
    "2.11.0": dt.date(2026, 3, 18),
    "2.12.0": dt.date(2026, 5, 20),
    "2.12.1": dt.date(2026, 6, 17),
    "2.13.0": dt.date(2026, 8, 19),
}

_NIGHTLY = re.compile(r"\.dev(\d{4})(\d{2})(\d{2})")
_RELEASE = re.compile(r"(\d+\.\d+\.\d+)(?:\+.*)?")


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


def version_date(torch_version: str) -> dt.datetime | None:
    """The day a nightly or a known release was made, from its version string alone."""
    nightly = _NIGHTLY.search(torch_version or "")
    if nightly:
        try:
            return _midnight(dt.date(*(int(g) for g in nightly.groups())))
        except ValueError:
            return None
    release = _RELEASE.fullmatch((torch_version or "").strip())
    if release and release.group(1) in RELEASE_DATES:
        return _midnight(RELEASE_DATES[release.group(1)])
    return None


def build_time(*, torch_version: str, commit_time: dt.datetime | None, first_run_started: dt.datetime | None) -> dt.datetime | None:
    """A build's ``ordered_at`` by the rule above; None when nothing is known."""
    return commit_time or version_date(torch_version) or first_run_started
