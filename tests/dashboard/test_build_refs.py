"""Build refs, one resolver (dashboard/results/selectors/build_refs.py) for pages, /compare/ and
the API: a unique sha prefix of 7+ hex with or without +label, a space for the +, the full sha, a
label; unknown and ambiguous refs answer 404/400 with the candidates and what settles it."""
from __future__ import annotations

import pytest

from dashboard.results.models import Build
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.common import Ambiguous, NotFound
from dashboard.pipeline.services import run_ingest_and_detect
from runner.ci import _describe
from tests.documents import make_document

pytestmark = pytest.mark.django_db
CPU = "cf30153c4c131c8164ee7798e5022d810682e2cb"
CU130 = "70d99e998b4955e0049d13a98d77ae1b14db1f45"


@pytest.fixture
def builds():
    for sha, version, label, name in ((CPU, "2.13.0+cpu", "cpu", "torch 2.13.0"), (CU130, "2.11.0+cu130", "cu130", "torch 2.11.0")):
        doc = make_document(git_sha=sha)
        doc["build"].update(torch_version=version, local_label=label, label=name)
        run_ingest_and_detect(document=doc)
    return {b.local_label: b for b in Build.objects.all()}


@pytest.mark.parametrize("ref, label", [
    ("cf30153", "cpu"), ("cf30153c4c13", "cpu"), (CPU, "cpu"), ("cf30153c4c13+cpu", "cpu"), ("CF30153+cpu", "cpu"),
    ("70d99e998b49+cu130", "cu130"), ("70d99e998b49 cu130", "cu130"), (f"{CU130} cu130", "cu130"), ("torch 2.11.0", "cu130"),
])
def test_every_ref_form_resolves(builds, ref, label):
    assert build_resolve(ref=ref) == builds[label]


def test_unknown_and_ambiguous_refs_name_the_candidates_and_what_settles_them(builds):
    with pytest.raises(NotFound, match=r"did you mean cf30153c4c13\+cpu\?"):
        build_resolve(ref="cf30153+cu130")
    Build.objects.create(torch_version="2.13.0+cu130", git_sha=CPU, local_label="cu130", ordered_at=builds["cpu"].ordered_at)
    with pytest.raises(Ambiguous, match=r"^2 builds have the sha 'cf30153': cf30153c4c13\+\S+, cf30153c4c13\+\S+; name one$"):
        build_resolve(ref="cf30153")
    Build.objects.create(torch_version="2.11.0", git_sha="cf30153" + "0" * 33, ordered_at=builds["cpu"].ordered_at)
    with pytest.raises(Ambiguous, match=r"names 3 builds of 2 commits: did you mean .*\? give more digits of the sha"):
        build_resolve(ref="cf30153")
    with pytest.raises(NotFound, match="no stored build's sha starts with abcdef0"):
        build_resolve(ref="abcdef0")


def test_pages_compare_and_api_take_every_form(client, builds):
    for ref in ("cf30153", "cf30153c4c13", CPU, "cf30153c4c13+cpu"):
        assert client.get("/compare/", {"head": ref}).status_code == 200, ref
        assert client.get(f"/api/v1/builds/{ref}/").json()["ref"] == "cf30153c4c13+cpu", ref
        assert client.get("/regressions/", {"build": ref}).status_code == 200, ref
    # "+" in a query string arrives as a space: ?build=70d99e998b49+cu130
    assert client.get("/dynamic/?machine=cpu&build=70d99e998b49+cu130").status_code == 200
    assert client.get("/api/v1/compare/?head=cf30153c4c13+cpu&base=70d99e998b49+cu130").status_code == 200


def test_unknown_refs_answer_404_and_ambiguous_400_with_candidates(client, builds):
    page = client.get("/compare/", {"head": "cf30153+cu130"})
    assert page.status_code == 404 and "did you mean cf30153c4c13+cpu?" in page.content.decode()
    api = client.get("/api/v1/builds/cf30153+cu130/")
    assert api.status_code == 404 and "did you mean cf30153c4c13+cpu?" in api.json()["detail"]
    Build.objects.create(torch_version="2.13.0+cu130", git_sha=CPU, local_label="cu130", ordered_at=builds["cpu"].ordered_at)
    page = client.get("/compare/", {"head": "cf30153"})
    assert page.status_code == 400 and "name one" in page.content.decode() and "head" in page.content.decode()


def test_the_cli_names_the_option_that_settles_an_error():
    text = _describe({"errors": [{"field": "machine_class", "message": "ran on several machine classes: choose one of cpu, gpu-h100"}]})
    assert text.startswith("machine_class (--machine-class): ")
