"""#34: a run document carries ``run.reason`` (optional: a version-1 document without it is a
nightly), checked (400 naming ``run.reason``), stored and shown; ``python -m runner run --reason``
writes it (exit 2 naming --reason for a bad one). Detection and alerts over such runs on real
services: tests/alerts/test_run_reason_alerts.py."""
from __future__ import annotations

import json

import pytest

from contract.document import validate_document
from contract.reasons import FINDING_REASONS, RUN_REASONS
from dashboard.results.models import Result, Run
from runner.arguments import build_parser
from runner.ci import build_parser as ci_parser
from runner.cli import main as runner_main
from runner.report import build_document
from tests.fixtures.api import fields
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db


def _submit(writer, document):
    return writer.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")


def test_one_list_of_reasons_for_the_document_the_model_and_both_clis():
    assert RUN_REASONS == ("nightly", "requested", "remeasurement", "bisection")
    assert tuple(Run.Reason.values) == RUN_REASONS and FINDING_REASONS == {"nightly", "requested"}
    [ci_reason] = [a for a in ci_parser()._subparsers._group_actions[0].choices["request"]._actions if a.dest == "reason"]
    assert tuple(ci_reason.choices) == RUN_REASONS
    assert build_parser().parse_args(["run", "--reason", "bisection"]).reason == "bisection"
    assert build_parser().parse_args(["run"]).reason is None


def test_a_document_without_a_reason_is_a_nightly_as_before(writer):
    document = make_document()
    assert "reason" not in document["run"]
    assert _submit(writer, document).status_code == 201
    run = Run.objects.get(pk=document["run"]["id"])
    assert run.reason == "nightly"


@pytest.mark.parametrize("reason", ["remeasurement", "bisection", "requested"])
def test_a_document_reason_is_stored_and_shown(writer, client, reason):
    document = make_document(reason=reason)
    assert _submit(writer, document).status_code == 201
    run_id = document["run"]["id"]
    assert Run.objects.get(pk=run_id).reason == reason
    assert writer.get(f"/api/v1/runs/{run_id}/").json()["reason"] == reason
    assert f'id="run-reason" data-reason="{reason}">reason: <strong>{reason}</strong>' in client.get(f"/runs/{run_id}/").content.decode()


def test_a_bad_reason_is_a_400_naming_run_reason_and_stores_nothing(writer):
    for bad in ("whim", "", 3, None, "Nightly"):
        response = _submit(writer, make_document(reason=bad))
        assert response.status_code == 400 and fields(response) == ["run.reason"], (bad, response.json())
    assert Run.objects.count() == 0 and Result.objects.count() == 0


def test_a_later_document_of_a_run_keeps_its_reason_or_is_refused(writer):
    document = make_document(reason="bisection", results=[make_result()])
    # Posted in parts (complete=false): a completed run takes no new results (issue #46 item 6).
    first = writer.post("/api/v1/runs/submit/?complete=false", json.dumps(document), content_type="application/json")
    assert first.status_code == 201
    more = make_document(run_id=document["run"]["id"], results=[make_result(regime="backed")])
    assert _submit(writer, more).status_code in (200, 201)  # no reason: the stored run's
    assert Run.objects.get(pk=document["run"]["id"]).reason == "bisection" and Result.objects.count() == 2
    other = make_document(run_id=document["run"]["id"], reason="nightly", results=[make_result(regime="unbacked")])
    refused = _submit(writer, other)
    assert refused.status_code == 400 and fields(refused) == ["run.reason"]
    assert "is stored with another reason" in refused.json()["detail"] and Result.objects.count() == 2


def test_the_runner_writes_the_reason_it_is_given_and_refuses_a_bad_one(capsys):
    environment = {"build": {"torch_version": "2.13.0", "git_sha": "a" * 40},
                   "machine": make_document()["machine"]}
    kwargs = dict(size="tiny", environment=environment, machine_class="cpu", build_label=None, workloads=[], results=[],
                  started_at="2026-11-25T00:00:00+00:00", finished_at="2026-11-25T00:00:01+00:00", command="c", requested_by="me")
    assert "reason" not in build_document(**kwargs)["run"]
    document = build_document(**kwargs, reason="remeasurement")
    assert document["run"]["reason"] == "remeasurement" and validate_document(document) == []
    with pytest.raises(SystemExit) as usage:
        runner_main(["run", "--reason", "whim"])
    assert usage.value.code == 2 and "--reason: invalid choice: 'whim'" in capsys.readouterr().err
