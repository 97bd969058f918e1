"""Shared fixtures. Every test runs with outbound network limited to loopback."""
from __future__ import annotations

import ipaddress
import os
import socket

import pytest

# The test suite's own sample workloads may be named as ``module:Class`` by every entry point (the
# API, the dashboard, workers), as nothing else may (workloads.registry); child processes inherit it.
os.environ.setdefault(
    "PTBENCH_WORKLOAD_MODULES", "tests.runner.sample_workloads,tests.runner.fault_workloads,tests.dispatch.workloads"
)
# ... and the dashboard finds them, without importing them, in their catalog (contract.catalog).
os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", os.path.join(os.path.dirname(__file__), "catalog.json"))

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
