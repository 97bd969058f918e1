"""An imported document measured before ``data_dependent_error`` existed reads as a run of today's
runner would (#42 item 8): its data-dependent compile_error is reclassified at import, nothing else."""
from __future__ import annotations

import json
from pathlib import Path

from contract.data_dependent import reclassify

RELEASE = Path(__file__).resolve().parents[2] / "bench" / "results" / "releases" / "cpu-torch2.13.0-cpu-tiny.json"


def test_a_guard_on_data_dependent_symnode_compile_error_gets_todays_status():
    results = json.loads(RELEASE.read_text())["results"]
    changed = [r for r in results if reclassify(r)]
    assert [(r["workload"], r["config"]["shape_regime"]) for r in changed] == [("masked_attention", "unbacked")]
    failure = changed[0]
    assert failure["status"] == "data_dependent_error"
    assert failure["error"]["message"].startswith("data-dependent guard Eq(u0, 1): LoweringException: GuardOnDataDependentSymNode")
    assert failure["environment"]["data_dependent"]["expression"] == "Eq(u0, 1)"
    assert not reclassify(failure)  # once is enough: the message is not prefixed twice
    other = {"status": "compile_error", "error": {"type": "AssertionError", "message": "failed OrderedSet([]) >= OrderedSet([u1])"}}
    assert not reclassify(other) and other["status"] == "compile_error"
