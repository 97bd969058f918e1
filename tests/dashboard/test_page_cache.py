"""The overview and workload pages come from a cache refreshed on ingest (#17, under load)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.dashboard.page_history import cases, ingest_build

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/", "/workloads/mlp_loop/"])
def test_a_cached_page_is_served_again_until_an_ingest_changes_the_data(client, url, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(1, cases(speedup=1.25))
    first = client.get(url).content.decode()
    with CaptureQueriesContext(connection) as again:
        assert client.get(url).content.decode() == first
    assert len(again) <= 5, [q["sql"][:120] for q in again.captured_queries]  # the data's fingerprint only (intakes included): nothing rendered

    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(2, cases(speedup=3.5))
    after = client.get(url).content.decode()
    assert after != first  # the second build is on the page


@pytest.mark.parametrize("seconds, fresh", [(0, True), (60, False)])
def test_page_cache_seconds_zero_renders_every_request(client, settings, seconds, fresh, django_capture_on_commit_callbacks):
    # A change the data's fingerprint cannot see (a build relabelled in place): with the cache off
    # (PTBENCH_PAGE_CACHE_SECONDS=0) the next request shows it; with it on, the cached page stays.
    from dashboard.results.models import Build

    settings.PAGE_CACHE_SECONDS = seconds
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(1, cases(speedup=1.25))
    assert "relabelled in place" not in client.get("/").content.decode()
    Build.objects.update(label="relabelled in place")
    assert ("relabelled in place" in client.get("/").content.decode()) is fresh


def test_the_environment_variable_sets_the_page_cache_seconds():
    import os
    import subprocess
    import sys

    code = "import django; django.setup(); from django.conf import settings; print(settings.PAGE_CACHE_SECONDS)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dashboard.settings"}
    for value, expected in (("0", "0"), ("5", "5")):
        out = subprocess.run([sys.executable, "-c", code], env={**env, "PTBENCH_PAGE_CACHE_SECONDS": value},
                             capture_output=True, text=True, check=True).stdout.split()
        assert out[-1] == expected
