"""The /regressions/ page: lists, filters, and triage by signed-in users (one or many at once)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from dashboard.regressions.models import Regression
from dashboard.regressions.services import detection_run
from tests.regressions.history import speedup_history

pytestmark = pytest.mark.django_db


@pytest.fixture
def stepped():
    runs = speedup_history([1.25] * 14 + [1.10] * 3, regimes=("static", "backed"))
    for run in runs:
        detection_run(run_id=run.id)
    return runs


@pytest.fixture
def signed_in(client):
    """A user who may triage (the permission to change a finding)."""
    user = get_user_model().objects.create_user("alice", password="pw-for-tests")
    user.user_permissions.add(Permission.objects.get(codename="change_regression"))
    client.force_login(user)
    return client


def test_signed_in_without_the_permission_cannot_triage(client, stepped):
    """Issue #46 item 4: staff without permissions set findings to wontfix and turned the gate to pass."""
    client.force_login(get_user_model().objects.create_user("bob", password="pw-for-tests", is_staff=True))
    assert "Triage needs the permission regressions.change_regression" in client.get("/regressions/").content.decode()
    ids = list(Regression.objects.values_list("id", flat=True))
    response = client.post("/regressions/", {"ids": ids, "status": "wontfix"})
    assert response.status_code == 403 and "<strong>permission</strong>" in response.content.decode()
    assert set(Regression.objects.values_list("status", flat=True)) == {"untriaged"}


def test_lists_open_regressions_grouped_by_run(client, stepped):
    page = client.get("/regressions/")
    assert page.status_code == 200
    html = page.content.decode()
    ids = list(Regression.objects.filter(kind="regression").values_list("id", flat=True))
    assert ids and all(f'data-id="{i}"' in html for i in ids)
    assert "alert-summary" in html and "compare" in html
    assert "Sign in" in html


def test_filters_change_the_list(client, stepped):
    backed = Regression.objects.filter(series__config__tags__shape_regime="backed").first()
    html = client.get("/regressions/", {"finding": "change_point", "workload": "resnet_train"}).content.decode()
    assert "No finding matches" in html
    html = client.get("/regressions/", {"status": "fixed"}).content.decode()
    assert f'data-id="{backed.id}"' not in html
    assert client.get("/regressions/", {"status": "bogus"}).status_code == 400
    typo = client.get("/regressions/", {"workload": "resnet_trian"})  # never an empty board with no hint
    assert typo.status_code == 400 and "did you mean &#x27;resnet_train&#x27;?" in typo.content.decode()
    assert client.get("/regressions/", {"build": "zzzz"}).status_code == 404  # no build has that sha or label


def test_anonymous_triage_is_sent_to_sign_in(client, stepped):
    regression = Regression.objects.first()
    response = client.post("/regressions/", {"ids": [regression.id], "status": "fixed"})
    assert response.status_code == 302 and "/login/" in response["Location"]
    regression.refresh_from_db()
    assert regression.status == "untriaged"


def test_bulk_triage_by_a_signed_in_user(signed_in, stepped):
    ids = list(Regression.objects.values_list("id", flat=True))
    response = signed_in.post("/regressions/?status=open", {"ids": ids, "status": "acknowledged", "note": "on it"})
    assert response.status_code == 302
    assert set(Regression.objects.values_list("status", flat=True)) == {"acknowledged"}
    assert set(Regression.objects.values_list("status_changed_by", flat=True)) == {"alice"}
    html = signed_in.get("/regressions/?status=acknowledged").content.decode()
    assert "on it" in html


@pytest.mark.parametrize("data, field", [
    ({"status": "fixed"}, "ids"),
    ({"ids": ["1"], "status": "solved"}, "status"),
    ({"ids": ["999999"], "status": "fixed"}, "regression_ids"),
])
def test_bad_triage_answers_400_with_the_field_and_changes_nothing(signed_in, stepped, data, field):
    response = signed_in.post("/regressions/", data)
    assert response.status_code == 400
    assert f"<strong>{field}</strong>" in response.content.decode()
    assert set(Regression.objects.values_list("status", flat=True)) == {"untriaged"}


def test_html_in_a_workload_name_is_escaped(client):
    from tests.dashboard.page_history import ingest_build
    from tests.regressions.history import case
    import random

    rng = random.Random(5)
    evil = {"name": "<script>alert(1)</script>", "category": "x", "phase": "infer", "dynamic_dims": [], "description": ""}
    ingest_build(1, [case(1.25, workload=evil["name"], rng=rng)], extra_workloads=[evil])
    failing = case(1.25, workload=evil["name"], rng=rng)
    failing.update(status="eager_error", error={"type": "RuntimeError", "message": "<b>boom</b>"})
    document = ingest_build(2, [failing], extra_workloads=[evil])
    detection_run(run_id=document["run"]["id"])
    html = client.get("/regressions/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<b>boom</b>" not in html


def test_public_reads_do_not_show_who_of_the_staff_triaged(signed_in, stepped):
    """Anonymous readers of the page and the API see that a finding was triaged, not by which account."""
    from django.test import Client
    from rest_framework.test import APIClient

    ids = list(Regression.objects.values_list("id", flat=True))
    signed_in.post("/regressions/?status=open", {"ids": ids, "status": "acknowledged", "note": "on it"})
    assert ">alice, " in signed_in.get("/regressions/?status=acknowledged").content.decode()
    public = Client().get("/regressions/?status=acknowledged").content.decode()
    assert "on it" in public and "alice" not in public
    read = APIClient().get("/api/v1/regressions/?status=acknowledged").json()["results"]
    assert {r["status_changed_by"] for r in read} == {"staff"}
    one = APIClient().get(f"/api/v1/regressions/{ids[0]}/").json()
    assert one["status_changed_by"] == "staff"
