"""Shared fixtures. Every test runs with outbound network limited to loopback."""
from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import socket
import tempfile
import uuid

import pytest

from tests.fixtures.processes import SESSION_ENV, TEST_ENV, leftover_case_processes

# The shared fixture modules: a test uses their fixtures by name and imports their helpers from them.
pytest_plugins = [
    "tests.fixtures.alerts", "tests.fixtures.api", "tests.fixtures.browser", "tests.fixtures.releases", "tests.fixtures.services",
    "tests.fixtures.workers",
]

# The test suite's own sample workloads may be named as ``module:Class`` by every entry point (the
# API, the dashboard, workers), as nothing else may (workloads.registry); child processes inherit it.
os.environ.setdefault(
    "PTBENCH_WORKLOAD_MODULES",
    "tests.runner.sample_workloads,tests.runner.fault_workloads,tests.runner.distributed_workloads,tests.dispatch.workloads",
)
# ... and the dashboard finds them, without importing them, in their catalog (contract.catalog).
os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", os.path.join(os.path.dirname(__file__), "catalog.json"))

# Every process this session starts carries this mark (children inherit it): at the end, a case
# process that carries it is one a test left behind (``pytest_sessionfinish``), and never a process
# of another test session on the same machine. Records of cases in flight go to a runtime directory
# of this session's own (runner.engine.lifetime), not the machine's.
os.environ[SESSION_ENV] = uuid.uuid4().hex
os.environ["PTBENCH_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="ptbench-test-runtime-")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_loopback(address) -> None:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return
    host = address[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if host == "localhost":
            return
        raise RuntimeError(f"test tried to reach {host!r}: tests may only reach loopback") from None
    if not ip.is_loopback:
        raise RuntimeError(f"test tried to reach {host}: tests may only reach loopback")


def _guarded_connect(self, address):
    _check_loopback(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check_loopback(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def loopback_only():
    """Block any connection that leaves the machine (subprocesses get no route either: CI has none)."""
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


@pytest.fixture
def subprocess_env(settings):
    """Environment for a child process (manage.py, runner, celery) that uses this test's database."""
    from django.db import connection

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    db = connection.settings_dict
    if db["ENGINE"].endswith("postgresql"):
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def pytest_collection_modifyitems(config, items):
    """Under scripts/test.sh the real services exist; anywhere else, say plainly what is missing."""
    if os.environ.get("PTBENCH_TEST_SERVICES"):
        return
    skip = pytest.mark.skip(reason="needs the services that scripts/test.sh starts (run `make test`)")
    for item in items:
        if "services" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def empty_page_cache():
    """Each test starts with no cached page (dashboard/results/page_cache.py): ids repeat after a rollback."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The processes a test starts (its fixtures' too) carry its id: a leftover names its test."""
    os.environ[TEST_ENV] = item.nodeid


def pytest_sessionfinish(session, exitstatus):
    """Fail the session when a test left a case process behind (issue #35); kill what is left."""
    from runner.engine.lifetime import kill_group

    left = leftover_case_processes(os.environ[SESSION_ENV])
    shutil.rmtree(os.environ["PTBENCH_RUNTIME_DIR"], ignore_errors=True)
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"pid {p['pid']} (parent {p['ppid']}, group {p['pgid']}) from {p['env'].get(TEST_ENV, '?')}: {p['command'][:300]}"
             for p in left]
    if reporter is not None:
        reporter.section("case processes left behind", sep="=", red=True, bold=True)
        for line in lines:
            reporter.write_line(line)
    for process in left:
        if process["pgid"] != os.getpgrp():
            kill_group(process["pgid"])
        try:
            os.kill(process["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
