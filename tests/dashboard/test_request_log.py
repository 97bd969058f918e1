"""The quick start's server prints each request once (#27 item 10: every 400 was printed three times,
"Bad Request: /" twice and the request line), with its status, at the quick start's log level."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from tests.dashboard.test_commands import ROOT

REQUESTS = {"/?q=%00": 400, "/no-such-page/": 404, "/static/web/site.css": 200}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            response.read()  # closing before the body is sent breaks the server's pipe and loses its log line
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def wait_for(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"runserver did not start (exit {server.poll()})")


@pytest.mark.services  # the child process must see the test database: PostgreSQL
@pytest.mark.django_db(transaction=True)
def test_runserver_prints_each_request_line_once(subprocess_env):
    port = free_port()
    env = {**subprocess_env, "DJANGO_LOG_LEVEL": "WARNING", "DJANGO_DEBUG": "true"}  # as scripts/quickstart.sh
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(server.stdout), daemon=True)
    reader.start()
    try:
        wait_for(port, server)
        answered = {path: status_of(f"http://127.0.0.1:{port}{path}") for path in REQUESTS}
        deadline = time.monotonic() + 60  # each line is written once its response has gone out (slow on a loaded host)
        while time.monotonic() < deadline and sum('"GET /' in line for line in lines) < len(REQUESTS):
            time.sleep(0.1)
        time.sleep(0.5)  # and never a second one
    finally:
        server.terminate()
        server.wait(timeout=30)
        reader.join(timeout=10)
    output = "".join(lines)
    assert answered == REQUESTS
    assert len([line for line in output.splitlines() if '"GET /' in line]) == len(REQUESTS), output
    for path, status in REQUESTS.items():
        assert output.count(f'"GET {path} HTTP/1.1" {status} ') == 1, output
    assert "Bad Request" not in output and "Not Found" not in output, output
