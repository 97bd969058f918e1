"""A Redis of its own for each pytest-xdist worker (``-p tests.xdist_services``, scripts/test.sh).

scripts/test.sh starts one Redis server per worker and lists their ports in
``PTBENCH_TEST_REDIS_PORTS``; worker ``gwN`` takes the N-th before Django reads its settings (this
module is loaded as a plugin, before pytest-django's setup). Its Celery workers, queues, cancel keys
and the fault tests' kills and restarts then touch nothing of the other worker's. The databases are
pytest-django's own per worker (``test_ptbench_gw0``, ...). Without xdist (``-n 0``) nothing changes.

``--dist loadfile`` hands whole files to the workers (a module's fixtures start once), but for the
files of ``SPREAD``, whose tests go one by one to whichever worker is free: the benchmark runs of
tests/bench/test_benchmarks_run.py take ~500 s together, which as one file kept one worker busy
while the other ran out of work. (``--dist loadgroup`` with ``xdist_group`` marks would say this in
the tests, but xdist 3.8 renames a test's id to group it, which pytest 9 no longer reads.)

The order the units are handed out in is longest first, so that the last ones are short and both
workers end together: the units of ``LONGEST`` (in its order), then the other files (xdist's order:
most tests first), then the spread tests not in ``LONGEST`` (benchmark runs of seconds each: the
filler at the end). xdist alone queued files by their number of tests, which put the slow files of
one or two compiled cases (tests/runner/test_runner_inductor.py: one run, ~100 s) at the very end."""
from __future__ import annotations

import os

import pytest

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...: set before plugins load
_ports = os.environ.get("PTBENCH_TEST_REDIS_PORTS", "").split()
if _worker.startswith("gw") and _ports:
    _port = _ports[int(_worker[2:]) % len(_ports)]
    os.environ["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{_port}/0"
    os.environ["CELERY_RESULT_BACKEND"] = f"redis://127.0.0.1:{_port}/1"

# Files whose tests are not held together on one worker: independent, slow subprocesses, no module fixture.
SPREAD = ("tests/bench/test_benchmarks_run.py",)

# The longest units, longest first: a file, or the id of a spread test (each its own unit). Seconds
# measured one unit at a time (``scripts/test.sh UNIT -n 0 --durations=40``) on the 2-core host, with
# other work loading it (2026-11-29); CI's own figure of the unit's slowest test in brackets.
_BENCH = "tests/bench/test_benchmarks_run.py::test_benchmark_runs"
_SLOW_BENCH = "tests/bench/test_benchmarks_run.py::test_distributed_benchmark_runs"
LONGEST = (
    "tests/runner/test_compile_paths.py",  # 240 s (AOTInductor [94], cpp_wrapper and freezing [84])
    "tests/dispatch/test_commit_bisect_workers.py",  # 231 s, one test
    "tests/workloads/test_llms.py",  # 112 s on a quiet host [235]
    "tests/runner/test_distributed.py",  # 208 s (the DDP inductor case 68 s [144])
    "tests/dashboard/test_browser_quickstart_pages.py",  # 201 s (the quick start's data 91 s, the link crawl 69 s)
    "tests/runner/test_runner_inductor.py",  # 179 s (its one run with a compile pair [135])
    "tests/dispatch/test_bisect_workers.py",  # 146 s
    f"{_SLOW_BENCH}[bisect_variants.py]",  # 135 s [138]
    "tests/runner/test_runner_statuses.py",  # 80 s
    f"{_SLOW_BENCH}[dispatch_overhead.py]",  # 65 s
    "tests/runner/test_case_lifetime.py",  # 65 s
    f"{_SLOW_BENCH}[explain_overhead.py]",  # 52 s
    f"{_SLOW_BENCH}[worker_suite.py]",  # 48 s
    f"{_BENCH}[artifact_overhead.py]",  # 46 s
    f"{_SLOW_BENCH}[dashboard_load.py]",  # 44 s
    f"{_SLOW_BENCH}[distributed_table.py]",  # 42 s
    f"{_BENCH}[dashboard_load.py]",  # 35 s
    f"{_BENCH}[aoti_load_check.py]",  # 29 s
    f"{_BENCH}[api_throughput.py]",  # 29 s
    f"{_BENCH}[case_lifetime.py]",  # 28 s
    f"{_BENCH}[case_start.py]",  # 20 s; the other benchmark runs take 17 s or less: the filler at the end
)


def queue_order(scopes: list[str]) -> list[str]:
    """``scopes`` (xdist's queue: files with most tests first, spread tests' ids) in the order they
    are handed out: ``LONGEST``'s first, then the files, then the spread tests, each kept in its order."""
    def key(i: int):
        return (LONGEST.index(scopes[i]) if scopes[i] in LONGEST else len(LONGEST), "::" in scopes[i], i)

    return [scopes[i] for i in sorted(range(len(scopes)), key=key)]


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesButSpread(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return nodeid if path in SPREAD else path

        def _assign_work_unit(self, node) -> None:
            # Before the first unit goes out: longest first (the module's docstring), else xdist's order.
            if not getattr(self, "longest_first", False):
                self.longest_first = True
                for scope in queue_order(list(self.workqueue)):
                    self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return FilesButSpread(config, log)
