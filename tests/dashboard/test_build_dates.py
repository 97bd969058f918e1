"""A build's time (Build.ordered_at): commit time, else nightly date, else known release date,
else its first run's start; never the ingest time."""
from __future__ import annotations

import datetime as dt

import pytest

from dashboard.results.build_dates import version_date
from dashboard.results.models import Build, BuildSummary
from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import make_document

pytestmark = pytest.mark.django_db
UTC = dt.timezone.utc


def test_version_date_reads_nightlies_and_known_releases():
    assert version_date("2.12.0.dev20261121") == dt.datetime(2026, 11, 21, tzinfo=UTC)
    assert version_date("2.12.0.dev20261121+cu130") == dt.datetime(2026, 11, 21, tzinfo=UTC)
    assert version_date("2.11.0+cu130") < version_date("2.12.1") < version_date("2.13.0+cpu")
    assert version_date("9.9.9") is None
    assert version_date("2.12.0.dev20261399") is None


def _ingest(sha: str, version: str, *, commit_time=None, started_at="2026-11-22T05:00:00+00:00") -> Build:
    doc = make_document(git_sha=sha, started_at=started_at)
    doc["build"].update(torch_version=version, commit_time=commit_time)
    run_ingest_and_detect(document=doc)
    return Build.objects.get(git_sha=sha)


def test_ordered_at_prefers_commit_then_nightly_then_release_then_first_run():
    committed = _ingest("a" * 40, "2.13.0+cpu", commit_time="2026-10-01T12:00:00+00:00")
    nightly = _ingest("b" * 40, "2.12.0.dev20261121+cpu")
    release = _ingest("c" * 40, "2.11.0+cu130")
    local = _ingest("d" * 40, "2.14.0a0+git1234", started_at="2026-11-23T08:30:00+00:00")
    assert committed.ordered_at == dt.datetime(2026, 10, 1, 12, tzinfo=UTC)
    assert nightly.ordered_at == dt.datetime(2026, 11, 21, tzinfo=UTC)
    assert release.ordered_at == dt.datetime(2026, 3, 18, tzinfo=UTC)
    assert local.ordered_at == dt.datetime(2026, 11, 23, 8, 30, tzinfo=UTC)
    # the summaries the pages sort by carry the same time
    assert BuildSummary.objects.get(build=local).ordered_at == local.ordered_at


def test_releases_ingested_together_keep_release_order():
    for sha, version in (("c" * 40, "2.13.0+cpu"), ("a" * 40, "2.11.0+cu130"), ("b" * 40, "2.12.1+cu130")):
        _ingest(sha, version)
    assert [b.torch_version for b in Build.objects.order_by("ordered_at")] == ["2.11.0+cu130", "2.12.1+cu130", "2.13.0+cpu"]


def test_migration_redates_builds_stored_at_ingest_time():
    from importlib import import_module

    from django.apps import apps

    build = _ingest("c" * 40, "2.14.0a0+local", started_at="2026-11-20T01:00:00+00:00")
    Build.objects.filter(pk=build.pk).update(ordered_at=dt.datetime(2026, 11, 24, 14, 0, tzinfo=UTC))
    import_module("dashboard.results.migrations.0004_morning_build_dates").redate_builds(apps, None)
    assert Build.objects.get(pk=build.pk).ordered_at == dt.datetime(2026, 11, 20, 1, 0, tzinfo=UTC)
    assert BuildSummary.objects.get(build=build).ordered_at == dt.datetime(2026, 11, 20, 1, 0, tzinfo=UTC)
