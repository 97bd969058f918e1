"""The overview and workload pages come from a cache refreshed on ingest (#17, under load)."""
from __future__ import annotations

import hashlib
import time

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
    assert len(again) == 1, [q["sql"][:120] for q in again.captured_queries]  # the data's fingerprint, one query: nothing rendered

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


def _at_once(page, rf, clients: int) -> list:
    """``clients`` requests for ``/`` through ``page`` at the same moment, each in its own thread."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    arrived = threading.Barrier(clients)

    def get(_):
        try:
            arrived.wait()
            return page(rf.get("/"))
        finally:
            connections.close_all()  # this thread's database connection (the data's fingerprint)

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(get, range(clients)))


def test_concurrent_cold_requests_render_the_page_once(rf):
    # 20 clients asking for `/` the moment after an ingest (#46 item 13): one renders, the others wait
    # for its copy instead of rendering the same page at once on the same cores.
    from django.http import HttpResponse

    from dashboard.results.page_cache import cached_page

    rendered = []

    @cached_page
    def page(request):
        rendered.append(request.path)
        time.sleep(0.3)  # the others arrive while it renders
        return HttpResponse(f"page {len(rendered)}")

    assert [r.content for r in _at_once(page, rf, 6)] == [b"page 1"] * 6
    assert rendered == ["/"]


def test_a_request_waiting_for_a_render_that_fails_renders_the_page_itself(rf):
    # The lock's holder got no 200 (or died): the waiters do not wait the whole wait out, nor serve its error.
    from django.http import HttpResponse

    from dashboard.results.page_cache import cached_page

    rendered = []

    @cached_page
    def page(request):
        rendered.append(request.path)
        if len(rendered) == 1:
            time.sleep(0.3)
            return HttpResponse("busy", status=503)
        return HttpResponse("page")

    started = time.monotonic()
    assert sorted(r.status_code for r in _at_once(page, rf, 2)) == [200, 503]
    assert time.monotonic() - started < 3  # not the 10 s wait


@pytest.mark.services
def test_a_page_one_process_renders_is_served_to_the_others_and_their_ingest_makes_it_stale(
        client, subprocess_env, django_capture_on_commit_callbacks):
    # gunicorn's workers and the Celery worker that ingests are processes of their own: with the broker
    # on Redis the pages are cached there, so a page rendered by one is served by the others, and the
    # version an ingest bumps in the worker makes it stale in every web process.
    import subprocess
    import sys

    from dashboard.results.models import Build
    from dashboard.results.page_cache import data_fingerprint

    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(1, cases(speedup=1.25))
    assert "relabelled in place" not in client.get("/").content.decode()
    key = "ptbench:page:" + hashlib.sha1(f"{data_fingerprint()} / ".encode()).hexdigest()
    Build.objects.update(label="relabelled in place")  # a change the rows' fingerprint cannot see
    assert "relabelled in place" not in client.get("/").content.decode()  # served from the cache

    code = ("import django; django.setup(); from django.core.cache import cache; "
            "from dashboard.results.page_cache import pages_version_bump; "
            f"print('cached' if cache.get({key!r}) is not None else 'missing'); pages_version_bump()")
    out = subprocess.run([sys.executable, "-c", code], env={**subprocess_env, "DJANGO_SETTINGS_MODULE": "dashboard.settings"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[-1] == "cached"
    assert "relabelled in place" in client.get("/").content.decode()  # the other process's bump: rendered anew


def test_the_pages_and_ingest_work_with_the_page_cache_unreachable(client, settings, django_capture_on_commit_callbacks):
    # Redis down (the broker's server: the page cache is its database 3): every page rendered, uncached.
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.CACHES = {**settings.CACHES, "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                                     "LOCATION": f"redis://127.0.0.1:{port}/3",
                                                     "OPTIONS": {"socket_timeout": 1, "socket_connect_timeout": 1}}}
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(1, cases(speedup=1.25))  # its version bump fails after the commit: the ingest stands
    for url in ("/", "/workloads/mlp_loop/"):
        assert client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(2, cases(speedup=3.5))
    assert "nightly 2" in client.get("/").content.decode()


def test_the_fingerprint_reads_the_newest_rows_of_every_app_in_one_query():
    from django.utils import timezone

    from dashboard.dispatch.models import Intake
    from dashboard.results.page_cache import NEWEST_COLUMNS, data_fingerprint

    assert {(model._meta.label, field) for model, field in NEWEST_COLUMNS} == {
        ("results.Result", "id"), ("results.Run", "ingested_at"), ("regressions.Regression", "id"),
        ("regressions.RegressionStatusChange", "id"), ("dispatch.Intake", "id"), ("dispatch.Intake", "finished_at")}
    empty = data_fingerprint()
    intake = Intake.objects.create(machine_class="cpu", requested_by="admin", requested_at=timezone.now())
    with CaptureQueriesContext(connection) as read:
        asked = data_fingerprint()
    assert len(read) == 1 and asked != empty  # a new intake shows on `/`
    Intake.objects.filter(pk=intake.pk).update(state=Intake.State.FAILED, finished_at=timezone.now())
    assert data_fingerprint() not in (empty, asked)  # and its answer
