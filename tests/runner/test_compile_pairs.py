"""A case's cold compile beside a reference's (``--compile-reference``): compile_cpu_ratio (issue #15 item 2)."""
from __future__ import annotations

import math
import os
import stat
import sys
from pathlib import Path

import pytest

from contract.spec import CaseSpec
from runner.cli import main
from runner.engine.compile_pairs import DEFAULT_PAIRS, CompileReference, one_pair, primary_threads, summarize
from runner.worker.config import ConfigError, WorkerConfig

REFERENCE = CompileReference(python="/opt/ref/bin/python", torch="2.11.0", git_sha="70d99e998b49")


def pair(build_wall, build_cpu, reference_wall, reference_cpu) -> dict:
    return {"build_wall_s": build_wall, "build_cpu_s": build_cpu, "reference_wall_s": reference_wall,
            "reference_cpu_s": reference_cpu, "cpu_source": "task_clock"}


def test_the_ratios_are_geometric_means_of_the_pairs_that_worked():
    record = summarize([pair(10, 40, 10, 20), pair(12, 30, 6, 30), {"error": "reference compile exited 1: boom"}], REFERENCE)
    assert record["work_ratio"] == pytest.approx(math.sqrt(2 * 1), abs=1e-5)  # CPU: 2.0 and 1.0
    assert record["wall_ratio"] == pytest.approx(math.sqrt(1 * 2), abs=1e-5)  # wall: 1.0 and 2.0
    assert record["reference"] == {"python": "/opt/ref/bin/python", "torch": "2.11.0", "git_sha": "70d99e998b49"}
    assert [("error" in p) for p in record["pairs"]] == [False, False, True]


def test_no_pair_that_worked_gives_no_ratio():
    record = summarize([{"error": "x"}], REFERENCE)
    assert record["work_ratio"] is None and record["wall_ratio"] is None


def _topology(root, siblings: dict[int, str]) -> str:
    for cpu, listed in siblings.items():
        (root / f"cpu{cpu}" / "topology").mkdir(parents=True)
        (root / f"cpu{cpu}" / "topology" / "thread_siblings_list").write_text(listed + "\n")
    return str(root)


def test_primary_threads_is_one_thread_per_core_or_none(tmp_path):
    """#34: this test passed whenever the answer was None (every host here has one thread a core)."""
    smt = _topology(tmp_path / "smt", {0: "0,4", 1: "1,5", 2: "2-3", 3: "2-3", 4: "0,4", 5: "1,5"})
    assert primary_threads(allowed={0, 1, 2, 3, 4, 5}, cpus=smt) == {0, 1, 2}
    assert primary_threads(allowed={3, 4, 1, 5}, cpus=smt) == {3, 4, 1}  # the lowest allowed sibling of each core
    assert primary_threads(allowed={4, 5}, cpus=smt) is None  # one allowed thread a core: nothing to leave out
    single = _topology(tmp_path / "single", {0: "0", 1: "1"})
    assert primary_threads(allowed={0, 1}, cpus=single) is None
    assert primary_threads(allowed={0, 1, 2}, cpus=single) is None  # cpu2's topology unknown
    # This host, against its own sysfs read here.
    allowed = os.sched_getaffinity(0)
    cores = {Path(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list").read_text().strip() for c in allowed}
    assert (primary_threads() is None) == (len(cores) == len(allowed))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--compile-pairs", "2"], "--compile-pairs: needs --compile-reference"),
        (["--compile-reference", "/nonexistent/python"], "--compile-reference /nonexistent/python: not an executable"),
        (["--compile-reference", sys.executable, "--compile-pairs", "0"], "--compile-pairs: from 1 to 20"),
        (["--compile-reference", sys.executable, "--compile-pairs", "two"], "'two' is not a whole number"),
    ],
)
def test_compile_pair_usage_errors_exit_2_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--workloads", "tests.runner.sample_workloads:TinyMLP", "--device", "cpu", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "environ, message",
    [({"PTBENCH_COMPILE_PAIRS": "0"}, "PTBENCH_COMPILE_PAIRS=0: from 1 to 20"),
     ({"PTBENCH_COMPILE_PAIRS": "many"}, "PTBENCH_COMPILE_PAIRS='many': not an integer")],
)
def test_worker_compile_pair_settings_are_checked(environ, message):
    with pytest.raises(ConfigError, match=message):
        WorkerConfig.from_env(environ)


def test_worker_compile_pair_settings_default_to_none_and_three():
    config = WorkerConfig.from_env({"PTBENCH_COMPILE_REFERENCE": "/opt/ref/bin/python"})
    assert (config.compile_reference, config.compile_pairs) == ("/opt/ref/bin/python", DEFAULT_PAIRS) == ("/opt/ref/bin/python", 3)
    assert WorkerConfig.from_env({}).compile_reference == ""


def test_a_reference_that_cannot_compile_drops_the_pair_with_its_error(tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 3\n")
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)
    spec = CaseSpec(workload="tests.runner.sample_workloads:TinyMLP", compile_mode="default", shape_regime="static",
                    dtype="float32", device="cpu", backend="eager", import_allowed=True)
    measured = one_pair(spec, sys.executable, CompileReference(python=str(broken)), timeout_s=120)
    assert measured["error"].startswith("reference compile exited 3") and "no torch here" in measured["error"]


# A real run with a compile reference (its ratio and its pair): tests/runner/test_runner_inductor.py,
# which asserts it of the same run as the inductor case's end-to-end facts (one run, not two).
