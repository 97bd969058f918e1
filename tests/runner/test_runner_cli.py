"""CLI usage errors, ``list``, the run document assembly, storage, and imports without Django."""
from __future__ import annotations

import subprocess
import sys

import pytest

from runner.cli import main
from contract.document import InvalidDocument, validate_document
from runner.engine.executor import REPO_ROOT
from runner.report import build_document, summary_table
from tests.runner.sample_workloads import TinyMLP

ENVIRONMENT = {
    "build": {"torch_version": "2.13.0+cpu", "git_sha": "cf30153c4c131c8164ee7798e5022d810682e2cb", "local_label": "cpu", "python_version": "3.11.7"},
    "machine": {"hostname": "ci", "cpu_model": "x", "cpu_count": 2, "memory_bytes": 1, "gpu_name": None, "gpu_count": 0, "driver_version": None, "cuda_version": None},
    "cuda_available": False,
}


def a_result(**changes) -> dict:
    result = {
        "workload": "test_tiny_mlp",
        "config": {"compile_mode": "default", "shape_regime": "static", "dtype": "float32", "device": "cpu"},
        "status": "pass",
        "metrics": {"speedup": 1.5, "speedup_noise": 0.02, "compile_time_cold_s": 7.25, "compile_time_warm_s": 1.5, "graph_break_count": 0, "recompile_count": 1},
        "graph_breaks": [],
        "recompiles": [{"reason": "tensor 'x' size mismatch at index 0. expected 16, actual 24", "count": 1}],
        "error": None,
        "repro": "python -m runner run ...",
        "duration_s": 12.5,
    }
    result.update(changes)
    return result


def document_with(results):
    return build_document(
        size="tiny", environment=ENVIRONMENT, machine_class="cpu", build_label=None, workloads=[TinyMLP()], results=results,
        started_at="2026-11-22T05:00:00+00:00", finished_at="2026-11-22T05:01:00+00:00", command="python -m runner run", requested_by="ci@host",
    )  # fmt: skip


def test_document_assembly_validates_and_labels_the_build():
    document = document_with([a_result()])
    assert validate_document(document) == []
    assert document["build"]["label"] == "torch 2.13.0+cpu"
    assert document["machine"]["machine_class"] == "cpu"
    assert document["workloads"] == [TinyMLP().describe()]


def test_document_assembly_refuses_an_invalid_result():
    with pytest.raises(InvalidDocument, match="results"):
        document_with([a_result(status="exploded")])


def test_summary_table_shows_speedup_noise_and_compile_times():
    table = summary_table([a_result(), a_result(status="timeout", metrics={})])
    header, rule, passed, timed_out = table.splitlines()
    assert header.split()[:5] == ["workload", "mode", "regime", "dtype", "status"]
    assert "1.500x ±2.0%" in passed and "7.25/1.50" in passed
    assert "timeout" in timed_out and "-/-" in timed_out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--modes", "fastest"], "unknown compile mode fastest"),
        (["run", "--regimes", "static,wobbly"], "unknown shape regime wobbly"),
        (["run", "--workloads", "no_such_module_xyz:Thing"], "no_such_module_xyz"),
        (["run", "--workloads", "tests.runner.sample_workloads:TinyMLP", "--python", "/nonexistent/python"], "not an executable"),
        (["run", "--timeout", "-1"], "must be positive"),
    ],
)
def test_usage_errors_exit_non_zero(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_list_prints_the_workloads(capsys):
    assert main(["list", "--workloads", "tests.runner.sample_workloads:TinyMLP,tests.runner.sample_workloads:TrainStep"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["workload", "class", "dynamic", "dims", "train/infer", "dtypes"]
    assert lines[2].split()[:4] == ["test_tiny_mlp", "test", "x:0", "infer"]
    assert lines[3].split()[:5] == ["test_train_step", "test", "x:0,", "y:0", "train"]


def test_runner_imports_and_describes_the_build_without_django():
    code = (
        "import sys, builtins\n"
        "real_import = builtins.__import__\n"
        "def no_django(name, *args, **kwargs):\n"
        "    if name == 'django' or name.startswith('django.'):\n"
        "        raise ImportError('django is not installed here')\n"
        "    return real_import(name, *args, **kwargs)\n"
        "builtins.__import__ = no_django\n"
        "import runner.cli, runner.report, runner.delivery, runner.engine.case, runner.engine.executor\n"
        "from runner.engine.environment import collect_environment\n"
        "print(collect_environment()['build']['torch_version'])\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip()


def test_a_run_without_jsonschema_stops_before_its_first_case(tmp_path):
    # On a GPU box the runner's interpreter may lack the dashboard's packages; the documents could
    # not be checked, so it must say so at once, not after the first (minutes-long) case.
    code = (
        "import sys; sys.modules['jsonschema'] = None\n"
        "from runner.cli import main\n"
        f"sys.exit(main(['run', '--workloads', 'tests.runner.sample_workloads:TinyMLP', '--out', {str(tmp_path / 'r.json')!r}]))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 1
    assert "validated with jsonschema, which this interpreter lacks" in completed.stderr
    assert "cases" not in completed.stdout and not (tmp_path / "r.json").exists()
