"""The quick start's situation on the real services (PostgreSQL, Redis, a dashboard Celery worker
process that runs detection): nightlies through the API, one commit imported with
``manage.py ingest --imported`` and measured here 2x slower, then a variant of it. Detection finds
nothing between the two copies, the verdicts say what they compared, a full sha names the local
build (issue #27 items 1 and 9, #33 item 5)."""
from __future__ import annotations

import json
import random

import pytest

from contract.variants import Overrides, variant_label
from dashboard.regressions.models import AlertSummary, Regression, Remeasurement
from dashboard.results.models import BuildSummary, Run
from tests.dashboard.page_history import sha_for
from tests.dashboard.test_commands import manage
from tests.fixtures.workers import wait_for
from tests.documents import WORKLOADS, make_document
from tests.regressions.history import case

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"
LOCAL, IMPORTED = f"{SHA[:12]}+cpu", f"{SHA[:12]}+cpu.imported"


def document(day: int, speedup: float, *, sha: str | None = None, label: str = "", seed: int = 0) -> dict:
    rng = random.Random(seed or day)
    doc = make_document(git_sha=sha or sha_for(day), results=[case(speedup * (1 + rng.gauss(0, 0.003)), rng=rng)])
    doc["build"].update(commit_time=f"2026-11-{day:02d}T00:00:00+00:00", local_label=label, label=f"nightly {day}")
    doc["workloads"] = WORKLOADS
    return doc


def summaries() -> list[tuple]:
    """What a failed verdict assertion prints: the builds each class knows, in the order trends use."""
    return list(BuildSummary.objects.order_by("machine_class", "ordered_at", "build_id").values_list(
        "machine_class", "build__git_sha", "build__local_label", "build__overrides", "ordered_at", "runs"))


def submit(client, doc: dict) -> None:
    answer = client.post("/api/v1/runs/submit/", json.dumps(doc), content_type="application/json")
    assert answer.status_code == 201, answer.content[:300]


def test_detection_and_verdicts_on_one_commit_imported_and_measured_here(writer, dashboard_worker, subprocess_env, tmp_path):  # noqa: F811
    dashboard_worker()
    for day in range(1, 6):
        submit(writer, document(day, 1.25))
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps(document(6, 1.25, sha=SHA, label="cpu")))
    done = manage("ingest", "--imported", "-v", "0", str(sample), env={**subprocess_env, "DJANGO_LOG_LEVEL": "WARNING"})
    assert done.returncode == 0, done.stderr
    submit(writer, document(6, 0.62, sha=SHA, label="cpu", seed=60))  # 2x slower: another host's speed
    wait_for(lambda: AlertSummary.objects.count() == Run.objects.count() == 7, timeout=180, what="the worker's detections")

    assert not Regression.objects.exists() and not Remeasurement.objects.exists()
    verdict = writer.get("/api/v1/verdict/", {"build": SHA, "fail_on_regression": "true", "fail_on_suspect": "true"})
    assert verdict.status_code == 200, verdict.json()  # a full sha of two builds: the one measured here
    assert (verdict.json()["build"], verdict.json()["verdict"]) == (LOCAL, "pass")
    assert verdict.json()["baseline"] == sha_for(5)[:12], (verdict.json(), summaries())
    named = writer.get("/api/v1/verdict/", {"build": LOCAL, "baseline": IMPORTED, "fail_on_regression": "true"})
    assert named.status_code == 409 and (named.json()["verdict"], named.json()["reason"]) == ("not_compared", "same_build")

    # A variant of the local build, 20 % slower: detected against its base build, its findings stored.
    slower = Overrides.build({"inductor.max_fusion_size": 1})
    variant = document(6, 0.5, sha=SHA, label="cpu", seed=61)
    variant["build"].update(overrides=slower.as_document(), local_label=variant_label("cpu", slower))
    submit(writer, variant)
    wait_for(lambda: AlertSummary.objects.count() == Run.objects.count() == 8, timeout=180, what="the variant's detection")
    ref = f"{SHA[:12]}+{variant_label('cpu', slower)}"
    answer = writer.get("/api/v1/verdict/", {"build": ref, "fail_on_regression": "true"})
    assert answer.status_code == 409 and answer.json()["verdict"] == "regressed", answer.json()
    assert answer.json()["baseline"] == LOCAL
    assert answer.json()["message"] == f"variant {ref} judged against its base build {LOCAL}"
    assert all(f["id"] is not None for f in answer.json()["regressions"])  # stored findings, on /regressions/
    assert answer.json()["reason"] == "base_regressed"
