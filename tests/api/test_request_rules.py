"""#33 item 7: a run request is checked in full with ``dispatch: false`` too; a local label follows
one grammar everywhere (a build no ref can name is never stored); a conflicting re-post of a build
is a 409 naming the fields."""
from __future__ import annotations

import json

import pytest

from dashboard.results.models import Build, Run
from tests.fixtures.api import fields
from tests.documents import make_document

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"
BUILD = {"torch_version": "2.13.0+cpu", "git_sha": SHA, "local_label": "cu130", "label": "nightly 11-21",
         "triton_version": "3.5.0"}


def post(client, url: str, body):
    return client.post(url, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("extra, field", [
    ({"size": "huge"}, "size"),
    ({"suite": "huge"}, "suite"),
    ({"workloads": ["no_such_workload"]}, "workloads"),
    ({"cases_expected": 6, "size": "huge"}, "size"),  # cases_expected implies dispatch=false
])
def test_a_run_request_without_dispatch_is_checked_in_full(writer, extra, field):
    assert post(writer, "/api/v1/builds/", BUILD).status_code == 201
    body = {"build": f"{SHA[:12]}+cu130", "machine_class": "cpu", "dispatch": False, **extra}
    if "cases_expected" in extra:
        del body["dispatch"]
    response = post(writer, "/api/v1/runs/", body)
    assert response.status_code == 400, response.content[:300]
    assert fields(response) == [field]
    assert not Run.objects.exists()
    fine = post(writer, "/api/v1/runs/", {"build": f"{SHA[:12]}+cu130", "machine_class": "cpu", "dispatch": False,
                                          "size": "tiny", "workloads": ["mlp_loop"]})
    assert fine.status_code == 201, fine.content[:300]


@pytest.mark.parametrize("label", ["a/b", "a b", "cu130/../x", "a?b", "a#b", "é"])
def test_a_local_label_no_ref_can_name_is_refused_everywhere(writer, label):
    response = post(writer, "/api/v1/builds/", {**BUILD, "local_label": label})
    assert response.status_code == 400 and fields(response) == ["local_label"], response.json()
    document = make_document()
    document["build"]["local_label"] = label
    response = post(writer, "/api/v1/runs/submit/", document)
    assert response.status_code == 400 and fields(response) == ["build.local_label"], response.json()
    assert not Build.objects.exists() and not Run.objects.exists()


def test_every_allowed_label_is_reachable_by_its_ref(writer, api):
    for label in ("cu130", "cu130.coordinate_descent_tuning.6d3139", "my-label_2", "patch+1"):
        response = post(writer, "/api/v1/builds/", {**BUILD, "local_label": label})
        assert response.status_code == 201, response.content[:300]
        ref = response.json()["ref"]
        assert api.get(f"/api/v1/builds/{ref}/").json()["local_label"] == label


def test_a_conflicting_repost_of_a_build_is_409_naming_the_fields(writer):
    assert post(writer, "/api/v1/builds/", BUILD).status_code == 201
    response = post(writer, "/api/v1/builds/", {**BUILD, "triton_version": "3.6.0", "label": "another name"})
    assert response.status_code == 409, response.content[:300]
    assert fields(response) == ["label", "triton_version"]
    assert "3.5.0" in response.json()["errors"][1]["message"]
    build = Build.objects.get()
    assert (build.label, build.triton_version) == ("nightly 11-21", "3.5.0")
    # The same build again, or with the fields left out, is the registered one (200).
    assert post(writer, "/api/v1/builds/", BUILD).status_code == 200
    assert post(writer, "/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": SHA, "local_label": "cu130"}).status_code == 200
