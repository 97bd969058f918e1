"""A Redis of its own for each pytest-xdist worker (``-p tests.xdist_services``, scripts/test.sh).

scripts/test.sh starts one Redis server per worker and lists their ports in
``PTBENCH_TEST_REDIS_PORTS``; worker ``gwN`` takes the N-th before Django reads its settings (this
module is loaded as a plugin, before pytest-django's setup). Its Celery workers, queues, cancel keys
and the fault tests' kills and restarts then touch nothing of the other worker's. The databases are
pytest-django's own per worker (``test_ptbench_gw0``, ...). Without xdist (``-n 0``) nothing changes."""
from __future__ import annotations

import os

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...: set before plugins load
_ports = os.environ.get("PTBENCH_TEST_REDIS_PORTS", "").split()
if _worker.startswith("gw") and _ports:
    _port = _ports[int(_worker[2:]) % len(_ports)]
    os.environ["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{_port}/0"
    os.environ["CELERY_RESULT_BACKEND"] = f"redis://127.0.0.1:{_port}/1"
