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
    assert len(again) <= 4  # the data's fingerprint only: nothing rendered

    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(2, cases(speedup=3.5))
    after = client.get(url).content.decode()
    assert after != first  # the second build is on the page
