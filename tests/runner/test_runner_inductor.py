"""One real case with inductor on the CPU, end to end through ``python -m runner run --out``."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contract.document import validate_document
from runner.engine.executor import REPO_ROOT


@pytest.mark.slow
def test_inductor_case_end_to_end(tmp_path):
    out = tmp_path / "run.json"
    command = [sys.executable, "-m", "runner", "run", "--size", "tiny", "--workloads", "tests.runner.sample_workloads:TinyMLP",
               "--modes", "default", "--regimes", "static", "--device", "cpu", "--out", str(out)]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    document = json.loads(out.read_text())
    assert validate_document(document) == []
    [result] = document["results"]
    metrics = result["metrics"]
    assert result["status"] == "pass", result["error"]
    assert metrics["speedup"] > 0 and metrics["speedup_noise"] >= 0
    assert metrics["compile_time_cold_s"] > 0 and metrics["compile_time_warm_s"] > 0
    assert metrics["eager_latency_ms"] > 0 and metrics["compiled_latency_ms"] > 0
    assert len(result["samples"]["eager_ms"]) == len(result["samples"]["compiled_ms"]) >= 5
    assert result["samples"]["calls_per_block"] >= 1
    assert metrics["recompile_count"] == 1 and metrics["graph_break_count"] == 0
    # The warm compile found the cold one's FX graph in the shared cache directory.
    assert result["environment"]["warm_compile_caches"].get("fxgraph_cache_hit", 0) >= 1
    assert document["build"]["torch_version"] and document["machine"]["machine_class"] == "cpu"
    assert "test_tiny_mlp" in completed.stdout  # the summary table
