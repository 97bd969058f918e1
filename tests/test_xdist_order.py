"""The order tests/xdist_services.py hands the units out in: the longest first, the short benchmark
runs last (both workers end together), and every unit it names still exists."""
from __future__ import annotations

from pathlib import Path

from tests.bench.test_benchmarks_run import RUNS, SLOW_RUNS
from tests.xdist_services import LONGEST, SPREAD, queue_order

ROOT = Path(__file__).resolve().parents[1]


def test_the_longest_units_go_first_then_the_files_then_the_other_spread_tests():
    bench = "tests/bench/test_benchmarks_run.py::test_benchmark_runs"
    queue = ["tests/api/test_many.py", f"{bench}[cpu_scan.py]", "tests/dispatch/test_bisect_workers.py",
             "tests/api/test_few.py", LONGEST[-1], LONGEST[0], f"{bench}[intake.py]"]
    assert queue_order(queue) == [LONGEST[0], "tests/dispatch/test_bisect_workers.py", LONGEST[-1], "tests/api/test_many.py",
                                  "tests/api/test_few.py", f"{bench}[cpu_scan.py]", f"{bench}[intake.py]"]
    assert queue_order(["tests/b.py", "tests/a.py"]) == ["tests/b.py", "tests/a.py"]  # xdist's order kept


def test_every_unit_named_longest_exists():
    """A renamed file or benchmark would otherwise drop out of the order unnoticed."""
    runs = {f"test_benchmark_runs[{argv[0]}]" for argv, _, _ in RUNS} | {
        f"test_distributed_benchmark_runs[{argv[0]}]" for argv, _, _ in SLOW_RUNS}
    for unit in LONGEST:
        path, _, test = unit.partition("::")
        assert (ROOT / path).is_file(), unit
        assert not test or (path in SPREAD and test in runs), unit
    assert len(set(LONGEST)) == len(LONGEST)
