"""A label cannot take over a build's ref (issue #46 item 1): a sha ref always means the sha, at every
entry point (the verdict API, ``runner ci verdict --build``, /compare/, POST /runs/); a label that
reads as a sha ref is refused at registration naming ``label``; a label is looked up explicitly
with ``label:``."""
from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create
from dashboard.results.models import Build, Run
from tests.fixtures.api import fields
from tests.api.history import planted_history, post
from tests.dashboard.page_history import ref_for_day, sha_for

pytestmark = pytest.mark.django_db
VICTIM = ref_for_day(3)  # the build that regressed (resnet_train starts failing on day 3)


@pytest.fixture
def history(writer, django_capture_on_commit_callbacks, monkeypatch):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    for document in planted_history([1.25] * 3, failing_from=3):
        with django_capture_on_commit_callbacks(execute=True):
            assert post(writer, document).status_code == 201


@pytest.fixture
def attacker() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name='other-team')[1]}")
    return client


def planted_label_build(label: str) -> Build:
    """A build carrying a sha-like label, as one stored before registration refused them."""
    return Build.objects.create(git_sha="f" * 40, torch_version="2.13.0", label=label, ordered_at=Build.objects.latest("ordered_at").ordered_at)


@pytest.mark.parametrize("label", [VICTIM, VICTIM.upper(), sha_for(3), f"{VICTIM} cu130", f"{VICTIM}+cu130", "unknown", " 1234567 "])
def test_a_label_that_reads_as_a_sha_is_refused_at_registration(attacker, label):
    response = attacker.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": "f" * 40, "label": label}, format="json")
    assert response.status_code == 400 and fields(response) == ["label"], response.json()
    assert "reads as a git sha ref" in response.json()["detail"]
    assert not Build.objects.exists()


def test_a_document_whose_build_label_reads_as_a_sha_is_refused(attacker):
    document = planted_history([1.25])[0]
    document["build"].update(git_sha="f" * 40, label=VICTIM)
    response = post(attacker, document)
    assert response.status_code == 400 and fields(response) == ["build.label"]
    assert not Build.objects.exists()


def test_ordinary_labels_are_still_registered(attacker):
    for index, label in enumerate(("nightly 2026-11-21", "torch 2.13.0", "abc", "cafe12 patched")):
        response = attacker.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": f"{index}" * 40, "label": label}, format="json")
        assert response.status_code == 201, (label, response.json())


def test_the_verdict_of_a_sha_is_the_sha_builds_whatever_a_label_says(history, api):
    planted_label_build(VICTIM)
    gated = api.get(f"/api/v1/verdict/?build={VICTIM}&fail_on_regression=true")
    assert gated.status_code == 409 and gated.json()["verdict"] == "regressed", gated.json()
    assert api.get(f"/api/v1/builds/{VICTIM}/").json()["git_sha"] == sha_for(3)


def test_a_sha_crafted_to_share_a_builds_12_digits_does_not_take_its_ref(history, attacker, api):
    """bench/hostile_probe.py: another token registered a build whose sha starts with the victim's
    12-digit ref, and the victim's gate answered 400 (ambiguous) instead of 409 regressed. A prefix of
    12 digits or more names the commit stored first; the crafted one is reached by its full sha."""
    crafted = VICTIM + "d" * 28
    assert attacker.post("/api/v1/builds/", {"torch_version": "2.13.0", "git_sha": crafted}, format="json").status_code == 201
    gated = api.get(f"/api/v1/verdict/?build={VICTIM}&fail_on_regression=true")
    assert gated.status_code == 409 and gated.json()["verdict"] == "regressed", gated.json()
    assert api.get(f"/api/v1/builds/{VICTIM}/").json()["git_sha"] == sha_for(3)
    assert api.get(f"/api/v1/builds/{crafted}/").json()["git_sha"] == crafted
    assert api.get(f"/api/v1/builds/{VICTIM[:7]}/").status_code == 400  # a short prefix still asks for more digits


def test_compare_and_a_run_request_take_the_sha_not_the_label(history, writer, client):
    planted_label_build(VICTIM)
    page = client.get("/compare/", {"head": VICTIM})
    assert page.status_code == 200 and page.context["head"].build.git_sha == sha_for(3)
    requested = writer.post("/api/v1/runs/", {"build": VICTIM, "machine_class": "cpu", "size": "tiny"}, format="json")
    assert requested.status_code == 201, requested.json()
    assert Run.objects.get(pk=requested.json()["id"]).build.git_sha == sha_for(3)


def test_a_label_is_found_when_asked_for_explicitly(history, api):
    planted = planted_label_build(VICTIM)
    assert api.get(f"/api/v1/builds/label:{VICTIM}/").json()["git_sha"] == planted.git_sha
    assert api.get("/api/v1/builds/label:nightly 2/").json()["git_sha"] == sha_for(2)
    assert api.get("/api/v1/builds/nightly 2/").json()["git_sha"] == sha_for(2)  # not a sha: a label
    missing = api.get("/api/v1/builds/label:nightly 9/")
    assert missing.status_code == 404


@pytest.fixture
def server(live_server, secret, monkeypatch):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    monkeypatch.setenv("PTBENCH_URL", live_server.url)
    monkeypatch.setenv("PTBENCH_API_TOKEN", secret)
    return live_server.url


@pytest.mark.django_db(transaction=True)
def test_ci_verdict_of_a_sha_is_not_hijacked_by_a_label(server, tmp_path, capsys):
    from runner.ci import main as ci

    paths = []
    for index, document in enumerate(planted_history([1.25] * 3, failing_from=3)):
        (tmp_path / f"{index}.json").write_text(json.dumps(document))
        paths.append(str(tmp_path / f"{index}.json"))
    assert ci(["submit", *paths]) == 0
    planted_label_build(VICTIM)
    capsys.readouterr()
    assert ci(["verdict", "--build", VICTIM]) == 1
    assert capsys.readouterr().out.startswith("verdict: regressed")
