"""Regressions and the verdict through the API, on histories with planted regressions that the
regressions app detects as in production (after each submit's commit)."""
from __future__ import annotations

import pytest

from dashboard.results.models import Machine
from tests.fixtures.api import fields
from tests.api.history import planted_history, post
from tests.dashboard.page_history import ref_for_day

pytestmark = pytest.mark.django_db
STEP = [1.25] * 14 + [1.10] * 3  # speedup drops 12% at day 15


@pytest.fixture
def detect(django_capture_on_commit_callbacks, monkeypatch):
    """Run detection after each ingest commits, in-process (as without a broker)."""
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)

    def submit(client, documents):
        for document in documents:
            with django_capture_on_commit_callbacks(execute=True):
                response = post(client, document)
            assert response.status_code == 201, response.json()

    return submit


def test_the_verdict_on_a_planted_regression(writer, api, detect):
    detect(writer, planted_history(STEP))
    verdict = api.get(f"/api/v1/verdict/?build={ref_for_day(15)}").json()
    assert (verdict["verdict"], verdict["reason"], verdict["baseline"], verdict["machine_class"]) == (
        "regressed", "regressions_found", ref_for_day(14), "cpu")
    found = [(r["workload"], r["metric"], r["finding"], r["kind"]) for r in verdict["regressions"]]
    assert ("mlp_loop", "speedup", "change_point", "regression") in found
    speedup = next(r for r in verdict["regressions"] if r["metric"] == "speedup")
    assert speedup["before"] == pytest.approx(1.25, rel=0.02) and speedup["after"] == pytest.approx(1.10, rel=0.02)
    assert speedup["magnitude"] < -0.05 and speedup["config"]
    # The same answer as 409 for curl --fail, and a clean build passes.
    gated = api.get(f"/api/v1/verdict/?build={ref_for_day(15)}&fail_on_regression=true")
    assert gated.status_code == 409 and gated.json()["verdict"] == "regressed"
    clean = api.get(f"/api/v1/verdict/?build={ref_for_day(10)}&fail_on_regression=true")
    assert clean.status_code == 200 and (clean.json()["verdict"], clean.json()["reason"]) == ("pass", "no_regressions")
    first = api.get(f"/api/v1/verdict/?build={ref_for_day(1)}").json()
    assert (first["verdict"], first["reason"], first["baseline"]) == ("pass", "no_baseline", None)
    # Against a named baseline: the two builds compared directly.
    named = api.get(f"/api/v1/verdict/?build={ref_for_day(17)}&baseline={ref_for_day(3)}").json()
    assert named["verdict"] == "regressed" and named["baseline"] == ref_for_day(3)
    assert any(r["metric"] == "speedup" for r in named["regressions"])


def test_a_case_that_starts_failing_fails_its_build(writer, api, detect):
    detect(writer, planted_history([1.25] * 3, failing_from=3))
    verdict = api.get(f"/api/v1/verdict/?build={ref_for_day(3)}").json()
    assert verdict["verdict"] == "regressed"
    assert any(r["workload"] == "resnet_train" and r["finding"] == "started_failing" for r in verdict["regressions"])
    assert api.get(f"/api/v1/verdict/?build={ref_for_day(2)}").json()["verdict"] == "pass"


def test_verdict_parameters(writer, api, detect):
    detect(writer, planted_history([1.25] * 2))
    missing = api.get("/api/v1/verdict/?build=1234567")
    assert missing.status_code == 404 and fields(missing) == ["build"]
    assert fields(api.get("/api/v1/verdict/")) == ["build"]
    assert fields(api.get(f"/api/v1/verdict/?build={ref_for_day(2)}&baseline=nope")) == ["baseline"]
    typo = api.get(f"/api/v1/verdict/?build={ref_for_day(2)}&machine_class=gpu-h100")  # no host ever had it
    assert fields(typo) == ["machine_class"] and typo.status_code == 400
    Machine.objects.create(hostname="h100-box", machine_class="gpu-h100")  # a class a host has, without this build
    other_class = api.get(f"/api/v1/verdict/?build={ref_for_day(2)}&machine_class=gpu-h100").json()
    assert (other_class["verdict"], other_class["reason"]) == ("pending", "no_results")  # never a silent pass


def test_list_filter_and_triage_regressions(writer, api, detect):
    detect(writer, planted_history(STEP, failing_from=16))
    everything = api.get("/api/v1/regressions/").json()
    assert everything["count"] >= 2
    speedup = api.get(f"/api/v1/regressions/?build={ref_for_day(15)}&workload=mlp_loop&metric=speedup&status=open").json()
    assert speedup["count"] == 1
    regression = speedup["results"][0]
    assert (regression["first_bad_build"], regression["last_good_build"], regression["kind"], regression["status"]) == (
        ref_for_day(15), ref_for_day(14), "regression", "untriaged")
    assert regression["series"]["workload"] == "mlp_loop" and regression["series"]["machine_class"] == "cpu"
    failing = api.get("/api/v1/regressions/?workload=resnet_train&finding=started_failing").json()["results"]
    assert [r["first_bad_build"] for r in failing] == [ref_for_day(16)]
    Machine.objects.create(hostname="h100-box", machine_class="gpu-h100")
    assert api.get("/api/v1/regressions/?machine_class=gpu-h100").json()["count"] == 0
    assert fields(api.get("/api/v1/regressions/?status=closed")) == ["status"]

    # Triage needs a token; who did it is the token's CI system.
    url = f"/api/v1/regressions/{regression['id']}/"
    assert api.patch(url, {"status": "invalid"}, format="json").status_code == 401
    assert fields(writer.patch(url, {"status": "solved"}, format="json")) == ["status"]
    triaged = writer.patch(url, {"status": "invalid", "note": "noisy box"}, format="json")
    assert triaged.status_code == 200, triaged.json()
    assert (triaged.json()["status"], triaged.json()["status_changed_by"], triaged.json()["note"]) == ("invalid", "api:ci", "noisy box")
    assert api.get(url).json()["status"] == "invalid"
    # Bulk triage is all or nothing.
    ids = [r["id"] for r in everything["results"]]
    bad = writer.post("/api/v1/regressions/triage/", {"regression_ids": [*ids, 10**9], "status": "fixed"}, format="json")
    assert bad.status_code == 400 and fields(bad) == ["regression_ids"]
    assert api.get("/api/v1/regressions/?status=fixed").json()["count"] == 0
    # Once every regression first seen at day 15 is marked invalid (noise), the build passes.
    assert api.get(f"/api/v1/verdict/?build={ref_for_day(15)}").json()["verdict"] == "regressed"
    day15 = [r["id"] for r in api.get(f"/api/v1/regressions/?build={ref_for_day(15)}&kind=regression").json()["results"]]
    done = writer.post("/api/v1/regressions/triage/", {"regression_ids": day15, "status": "invalid"}, format="json")
    assert done.status_code == 200 and done.json()["updated"] == len(day15) - 1  # one was already invalid
    assert api.get(f"/api/v1/verdict/?build={ref_for_day(15)}").json()["verdict"] == "pass"
    assert api.get("/api/v1/regressions/999999/").status_code == 404
