"""A Redis of its own for each pytest-xdist worker (``-p tests.xdist_services``, scripts/test.sh).

scripts/test.sh starts one Redis server per worker and lists their ports in
``PTBENCH_TEST_REDIS_PORTS``; worker ``gwN`` takes the N-th before Django reads its settings (this
module is loaded as a plugin, before pytest-django's setup). Its Celery workers, queues, cancel keys
and the fault tests' kills and restarts then touch nothing of the other worker's. The databases are
pytest-django's own per worker (``test_ptbench_gw0``, ...). Without xdist (``-n 0``) nothing changes.

``--dist loadfile`` hands whole files to the workers (a module's fixtures start once), but for the
files of ``SPREAD``, whose tests go one by one to whichever worker is free, before any file: the
benchmark runs of tests/bench/test_benchmarks_run.py take ~500 s together, which as one file kept
one worker busy while the other ran out of work. (``--dist loadgroup`` with ``xdist_group`` marks would say this
in the tests, but xdist 3.8 renames a test's id to group it, which pytest 9 no longer reads.)"""
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
            # Before the first unit goes out: the spread tests first (in their order), the files after
            # them (most tests first). A long one (bisect_variants: ~100 s) at the end of the queue
            # would keep one worker busy after the other ran out.
            if not getattr(self, "spread_first", False):
                self.spread_first = True
                for scope in reversed([scope for scope in self.workqueue if "::" in scope]):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return FilesButSpread(config, log)
