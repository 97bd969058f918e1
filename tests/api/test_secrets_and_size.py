"""#19 item 6: the debug page never shows the broker's or the result backend's password; a build's
environment is capped and only its detail view carries it."""
from __future__ import annotations

import importlib

import pytest
from django.test import Client, override_settings

from tests.fixtures.api import fields

pytestmark = pytest.mark.django_db
# Built at run time: the debug page quotes this file's source around the failing frame.
SECRET = "".join(["hun", "ter2"])


@override_settings(DEBUG=True, CELERY_BROKER_URL=f"redis://:{SECRET}broker@10.0.0.1:6379/0",
                   CELERY_RESULT_BACKEND=f"redis://ptbench:{SECRET}backend@10.0.0.1:6379/1")
def test_the_debug_page_masks_url_passwords(monkeypatch):
    def boom():
        raise RuntimeError("boom")

    monkeypatch.setattr(importlib.import_module("dashboard.web.views.overview"), "machine_class_list", boom)
    monkeypatch.setenv("CELERY_BROKER_URL", f"redis://:{SECRET}env@10.0.0.1:6379/0")
    response = Client(raise_request_exception=False).get("/", HTTP_ACCEPT="text/html")
    page = response.content.decode()
    assert response.status_code == 500 and "CELERY_BROKER_URL" in page and "redis://:********" in page
    assert SECRET not in page


def register(writer, environment):
    return writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": "a" * 40, "environment": environment},
                       format="json")


def test_only_the_detail_view_carries_the_environment(writer, api):
    assert register(writer, {"pip": "x" * 1000}).status_code == 201
    listed = api.get("/api/v1/builds/").json()["results"]
    assert len(listed) == 1 and "environment" not in listed[0]
    assert api.get(f"/api/v1/builds/{'a' * 12}/").json()["environment"] == {"pip": "x" * 1000}


def test_an_environment_over_64_kib_is_refused(writer, api):
    response = register(writer, {"pip": "x" * 70_000})
    assert response.status_code == 400 and fields(response) == ["environment"]
    assert api.get("/api/v1/builds/").json()["count"] == 0


def test_a_commit_time_before_1970_is_refused(writer):
    response = writer.post("/api/v1/builds/", {"torch_version": "2", "git_sha": "a" * 40, "commit_time": "1900-01-01T00:00:00Z"},
                           format="json")
    assert response.status_code == 400 and fields(response) == ["commit_time"]
