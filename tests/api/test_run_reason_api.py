"""#34: ``Run.reason`` through the API (requested by default, a bad one named), ``ci request
--reason`` and the run page."""
from __future__ import annotations

import pytest

from dashboard.results.models import Run
from runner.ci import main as ci
from tests.fixtures.api import fields
from tests.regressions.history import speedup_history

pytestmark = pytest.mark.django_db


def test_the_api_takes_a_reason_and_names_a_bad_one(writer, client):
    writer.post("/api/v1/builds/", {"torch_version": "2.13.0+cpu", "git_sha": "c" * 40}, format="json")
    body = {"build": "c" * 12, "machine_class": "cpu", "size": "tiny", "dispatch": False, "cases_expected": 2}
    default = writer.post("/api/v1/runs/", body, format="json").json()
    assert default["reason"] == "requested" and Run.objects.get(pk=default["id"]).reason == "requested"
    bisection = writer.post("/api/v1/runs/", {**body, "reason": "bisection"}, format="json").json()
    assert Run.objects.get(pk=bisection["id"]).reason == "bisection"
    assert writer.get(f"/api/v1/runs/{bisection['id']}/").json()["reason"] == "bisection"
    bad = writer.post("/api/v1/runs/", {**body, "reason": "whim"}, format="json")
    assert bad.status_code == 400 and fields(bad) == ["reason"] and Run.objects.count() == 2
    page = client.get(f"/runs/{bisection['id']}/").content.decode()
    assert 'id="run-reason" data-reason="bisection">reason: <strong>bisection</strong>: it places a change' in page
    assert 'data-reason="nightly"' in client.get(f"/runs/{speedup_history([1.2])[0].id}/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_ci_request_sends_the_reason(live_server, secret, monkeypatch, capsys):
    monkeypatch.setenv("PTBENCH_URL", live_server.url)
    monkeypatch.setenv("PTBENCH_API_TOKEN", secret)
    assert ci(["request", "--build", "d" * 12, "--machine-class", "cpu", "--torch-version", "2.13.0", "--cases", "1",
               "--reason", "bisection"]) == 0
    run_id = capsys.readouterr().out.strip()
    assert Run.objects.get(pk=run_id).reason == "bisection"
    with pytest.raises(SystemExit) as usage:
        ci(["request", "--build", "d" * 12, "--machine-class", "cpu", "--reason", "whim"])
    assert usage.value.code == 2 and "--reason: invalid choice: 'whim'" in capsys.readouterr().err
