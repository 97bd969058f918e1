"""``python -m runner ci``: submit, request, wait and verdict against a live server (real HTTP on
loopback), detection running after each commit as without a broker."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from rest_framework.test import APIClient

from runner.ci import main as ci
from tests.api.history import planted_history
from tests.dashboard.page_history import ref_for_day


@pytest.fixture
def server(live_server, secret, monkeypatch):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)  # detection in-process after each commit
    monkeypatch.setenv("PTBENCH_URL", live_server.url)
    monkeypatch.setenv("PTBENCH_API_TOKEN", secret)
    return live_server.url


def write(tmp_path, documents) -> list[str]:
    paths = []
    for index, document in enumerate(documents, start=1):
        path = tmp_path / f"run{index}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    return paths


def test_submit_wait_and_a_verdict_that_fails_the_build(server, tmp_path, capsys):
    documents = planted_history([1.25] * 3, failing_from=3)
    assert ci(["submit", *write(tmp_path, documents)]) == 0
    out = capsys.readouterr().out
    assert out.count("stored: 2 results created") == 3
    assert ci(["submit", write(tmp_path, documents[:1])[0]]) == 0  # safe to repeat
    assert "already stored: 0 results created, 2 already there" in capsys.readouterr().out

    assert ci(["wait", "--run", documents[2]["run"]["id"], "--interval", "0.1"]) == 0
    assert "completed, 2 cases" in capsys.readouterr().err
    assert ci(["wait", "--build", ref_for_day(3), "--interval", "0.1"]) == 0

    assert ci(["verdict", "--build", ref_for_day(2)]) == 0
    assert capsys.readouterr().out.startswith(f"verdict: pass (no_regressions) for build {ref_for_day(2)} against {ref_for_day(1)} on cpu")
    assert ci(["verdict", "--build", ref_for_day(3)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("verdict: regressed (regressions_found)") and "resnet_train" in out and "started_failing" in out
    assert ci(["verdict", "--build", ref_for_day(3), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "regressed"


def test_request_wait_and_cancel(server, tmp_path, capsys):
    sha = "e" * 40
    assert ci(["request", "--build", sha[:12], "--machine-class", "cpu", "--torch-version", "2.13.0", "--cases", "4"]) == 0
    run_id = capsys.readouterr().out.strip()
    assert ci(["wait", "--run", run_id, "--timeout", "0.3", "--interval", "0.1"]) == 3
    err = capsys.readouterr().err
    assert f"run {run_id} (cpu): pending, 0/4 cases" in err and "did not finish within" in err
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {os.environ['PTBENCH_API_TOKEN']}")
    assert client.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 200
    assert ci(["wait", "--run", run_id, "--interval", "0.1"]) == 1
    assert "cancelled" in capsys.readouterr().err


def test_errors_name_the_problem_and_exit_3(server, tmp_path, capsys, monkeypatch):
    documents = planted_history([1.25])
    documents[0]["results"][0]["status"] = "exploded"
    assert ci(["submit", *write(tmp_path, documents)]) == 3
    assert "HTTP 400: results[0].status: 'exploded' is not one of" in capsys.readouterr().err
    monkeypatch.setenv("PTBENCH_API_TOKEN", "ptb_wrong")
    assert ci(["submit", *write(tmp_path, planted_history([1.25]))]) == 3
    assert "HTTP 401: Authorization: unknown token" in capsys.readouterr().err
    monkeypatch.delenv("PTBENCH_API_TOKEN")  # reads need none
    assert ci(["verdict", "--build", "1234567"]) == 3
    assert "HTTP 404: build (--build): no build '1234567'" in capsys.readouterr().err


def test_the_command_line_entry_point(server):
    """``python -m runner ci verdict --url URL --build BUILD`` in a process with no Django settings."""
    done = subprocess.run([sys.executable, "-m", "runner", "ci", "verdict", "--url", server, "--build", "1234567"],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.returncode == 3 and "no build" in done.stderr
    usage = subprocess.run([sys.executable, "-m", "runner", "ci", "verdict"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "--build" in usage.stderr


def test_the_runner_posts_its_document_with_url(server, secret):
    from runner.delivery import DeliveryFailed, deliver

    document = planted_history([1.25])[0]
    assert deliver(document, url=server, token=secret) == f"run {document['run']['id']} stored: 2 results created"
    with pytest.raises(DeliveryFailed, match="HTTP 40[13]"):
        deliver(document, url=server, token="ptb_wrong")


def test_verdict_usage_errors_exit_2_naming_what_settles_them(server, tmp_path, capsys):
    # A build measured on two machine classes, asked without --machine-class (issue #27 item 9).
    from tests.api.history import document_for_day
    from tests.documents import make_result

    cpu = document_for_day(1, [make_result("mlp_loop", "static")])
    gpu = document_for_day(1, [make_result("mlp_loop", "static")], machine_class="gpu-h100")
    assert ci(["submit", *write(tmp_path, [cpu, gpu])]) == 0
    capsys.readouterr()
    assert ci(["verdict", "--build", ref_for_day(1)]) == 2
    err = capsys.readouterr().err
    assert "machine_class (--machine-class): " in err and "choose one of cpu, gpu-h100" in err
    # A class no host ever had: answered at once, never waited on (issue #42 item 6).
    started = time.monotonic()
    assert ci(["verdict", "--build", ref_for_day(1), "--machine-class", "gpu-h10"]) == 2
    err = capsys.readouterr().err
    assert "machine_class (--machine-class): unknown machine class 'gpu-h10'; did you mean 'gpu-h100'?" in err
    assert "waiting" not in err and time.monotonic() - started < 10
    assert ci(["wait", "--build", ref_for_day(1), "--machine-class", "gpu-h10", "--timeout", "600"]) == 2
    assert "did you mean 'gpu-h100'?" in capsys.readouterr().err
    # The build itself as baseline: nothing to compare, a usage error too.
    assert ci(["verdict", "--build", ref_for_day(1), "--machine-class", "cpu", "--baseline", ref_for_day(1)]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("verdict: not_compared (same_build)")
    assert "error: same build: nothing to compare" in captured.err


def test_help_lists_the_exit_codes():
    for argv in (["ci", "--help"], ["ci", "verdict", "--help"]):
        done = subprocess.run([sys.executable, "-m", "runner", *argv], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": "."})
        assert done.returncode == 0, done.stderr
        assert "exit status:" in done.stdout
        for code in ("0  pass", "1  regressed", "2  usage", "3  no answer", "4  suspect"):
            assert code in done.stdout, (argv, code)


def test_a_series_whose_detection_fails_makes_the_verdict_an_error_naming_it(server, tmp_path, capsys, monkeypatch):
    """#34: a detection failure was only logged and the verdict said pass. It is kept on the run's
    alert summary; the API, ``ci verdict`` (exit 3) and a gating curl (409) say error naming the
    series; detection run again without the fault clears it."""
    from dashboard.regressions.models import AlertSummary
    from dashboard.regressions.services import detection, detection_run

    original = detection._deterministic_findings

    def fails_on_resnet(*, series, **kwargs):
        if series.workload.name == "resnet_train":
            raise OverflowError("int too large to convert to float")
        return original(series=series, **kwargs)

    documents = planted_history([1.25] * 3)
    assert ci(["submit", *write(tmp_path, documents[:2])]) == 0
    monkeypatch.setattr(detection, "_deterministic_findings", fails_on_resnet)
    assert ci(["submit", *write(tmp_path, documents[2:])]) == 0
    capsys.readouterr()
    summary = AlertSummary.objects.get(run_id=documents[2]["run"]["id"])
    assert [(f["workload"], f["config"], f["error"]) for f in summary.detection_failures] == [
        ("resnet_train", str(summary.run.results.get(workload__name="resnet_train").config),
         "OverflowError: int too large to convert to float")]

    assert ci(["verdict", "--build", ref_for_day(3)]) == 3
    captured = capsys.readouterr()
    assert captured.out.startswith(f"verdict: error (detection_failed) for build {ref_for_day(3)}")
    assert "detection failed on 1 series" in captured.err and "resnet_train" in captured.err
    assert "OverflowError" in captured.err and "no verdict" not in captured.err
    assert ci(["verdict", "--build", ref_for_day(3), "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["reason"] == "detection_failed"
    api = APIClient()
    answer = api.get("/api/v1/verdict/", {"build": ref_for_day(3), "fail_on_regression": "true"})
    assert answer.status_code == 409 and answer.json()["verdict"] == "error"
    assert "resnet_train" in answer.json()["message"]
    assert api.get("/api/v1/verdict/", {"build": ref_for_day(2)}).json()["verdict"] == "pass"  # the earlier build's

    monkeypatch.setattr(detection, "_deterministic_findings", original)
    detection_run(run_id=documents[2]["run"]["id"])
    assert AlertSummary.objects.get(run_id=documents[2]["run"]["id"]).detection_failures == []
    assert ci(["verdict", "--build", ref_for_day(3)]) == 0
