"""The "what changed" view shows each side's build as its own run saw it (``Run.build_facts``), not the
Build row's first run: torch 2.11's commit 70d99e998b49 was imported from a Python 3.11 interpreter
(the cpu class's release document) before the H100 runs measured it from Python 3.12, and the view
said "Python 3.11.7 -> 3.12.3" between two H100 runs of one interpreter (docs/explain.md)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dashboard.results.models import Result
from dashboard.results.selectors.explain import results_explain

pytestmark = [pytest.mark.services, pytest.mark.django_db]
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def _result_of(document: Path) -> Result:
    run_id = json.loads(document.read_text())["run"]["id"]
    return Result.objects.get(run_id=run_id, workload__name="bert_encoder")


def test_each_side_shows_the_interpreter_its_run_measured_with():
    plain, fused = RESULTS / "explain" / "h100-plain-2026-11-25.json", RESULTS / "explain" / "h100-fusion1-2026-11-25.json"
    call_command("ingest", "--imported", "-v", "0", str(RESULTS / "releases" / "cpu-torch2.11.0-cu130-tiny.json"), str(plain), str(fused))
    before, after = _result_of(plain), _result_of(fused)
    assert before.build.python_version == "3.11.7"  # the Build row: its first run's interpreter
    assert before.run.build_facts["python_version"] == "3.12.3"
    rows = {row["key"]: row for row in results_explain(before_id=before.id, after_id=after.id).report["environment"]}
    assert (rows["Python"]["before"], rows["Python"]["after"]) == ("3.12.3", "3.12.3") and not rows["Python"]["differs"]
    assert rows["build.python_executable"]["before"] == "/opt/torch/.venv/bin/python3"
    assert rows["settings"]["differs"]  # the one real difference: inductor.max_fusion_size=1
