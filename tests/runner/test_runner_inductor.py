"""One real case with inductor on the CPU, end to end through ``python -m runner run --out``, with a
compile reference beside it (``--compile-reference``, issue #15 item 2). One run of the case (its
cold compile, its warm compile, one compile pair): the tests assert different facts of that run."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from contract.document import validate_document
from runner.engine.compile_pairs import METHOD
from runner.engine.executor import REPO_ROOT


@pytest.fixture(scope="module")
def inductor_run(tmp_path_factory) -> tuple[dict, str]:
    """The run document and the runner's output of TinyMLP default/static with inductor, its warm
    compile and one compile pair against this same interpreter as the reference."""
    out = tmp_path_factory.mktemp("inductor") / "run.json"
    command = [sys.executable, "-m", "runner", "run", "--size", "tiny", "--workloads", "tests.runner.sample_workloads:TinyMLP",
               "--modes", "default", "--regimes", "static", "--device", "cpu",
               "--compile-reference", sys.executable, "--compile-pairs", "1", "--out", str(out)]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(out.read_text()), completed.stdout


@pytest.mark.slow
def test_inductor_case_end_to_end(inductor_run):
    document, stdout = inductor_run
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
    # The warm compile found the cold one's FX graph in the shared cache directory (the pair, run
    # before it, compiled in caches of its own).
    assert result["environment"]["warm_compile_caches"].get("fxgraph_cache_hit", 0) >= 1
    assert document["build"]["torch_version"] and document["machine"]["machine_class"] == "cpu"
    assert "test_tiny_mlp" in stdout  # the summary table


@pytest.mark.slow
def test_a_run_with_a_compile_reference_records_the_ratio_and_its_pairs(inductor_run):
    document, _ = inductor_run
    assert validate_document(document) == []
    [result] = document["results"]
    pairs = result["environment"]["compile_pairs"]
    [measured] = pairs["pairs"]
    assert "error" not in measured, measured
    assert measured["build_cpu_s"] > 0 and measured["reference_cpu_s"] > 0 and measured["build_wall_s"] > 0
    assert measured["cpu_source"] in ("task_clock", "rusage")
    # Counted from the go line with the worker pool already started, both main threads on one core.
    assert pairs["method"] == METHOD == 2
    assert pairs["settings"]["prewarm"] is True and pairs["settings"]["shared_core"] == min(os.sched_getaffinity(0))
    assert measured["build_main_cpus"] == measured["reference_main_cpus"] == 1
    assert 0 < measured["build_own_cpu_s"] <= measured["build_cpu_s"] + 0.05
    # The same interpreter on both sides: the same work, whatever the host did meanwhile.
    assert 0.7 < result["metrics"]["compile_cpu_ratio"] < 1.4
    assert result["metrics"]["compile_cpu_ratio"] == pytest.approx(measured["build_cpu_s"] / measured["reference_cpu_s"], rel=1e-3)
    assert pairs["reference"]["python"] == os.path.abspath(sys.executable)
    assert pairs["reference"]["torch"] == document["build"]["torch_version"]
