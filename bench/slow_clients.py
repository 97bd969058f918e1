"""Slow clients (slowloris) against the compose deployment's web server, on loopback: gunicorn started
with compose's own settings (deploy/gunicorn.conf.py), alone and behind nginx with compose's own
server block (deploy/nginx.conf, its upstream and port pointed at loopback). N slow clients each send
a request's headers one byte at a time and never finish; meanwhile ordinary requests are timed.

    python -m bench.slow_clients [--slow 8] [--requests 10] [--path /api/v1/]

Sync gunicorn alone: each slow client holds one of the 3 workers for as long as it keeps sending
(issue #46 item 8: four silenced the site for 25 s), so the ordinary requests wait for them (here: until
the probe gives up, ``--wait`` s). Behind nginx they are answered at once: nginx passes a request on
only once it is whole. tests/dispatch/test_slow_clients.py runs the nginx half.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"
NGINX_CONF = ROOT / "deploy" / "nginx.conf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)


def wait_listening(port: int, process: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[:3]} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {seconds:.0f} s")


def dashboard_env() -> dict[str, str]:
    """The web container's settings that matter here (DEBUG off), on loopback."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "dashboard.settings", "DJANGO_DEBUG": "false",
            "DJANGO_SECRET_KEY": "slow-clients-" + "k" * 40, "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_SECURE_SSL_REDIRECT": "false", "DJANGO_LOG_LEVEL": "ERROR"}


def nginx_config(work: Path, listen: int, upstream: int) -> Path:
    """deploy/nginx.conf inside a minimal main configuration, as the official image's nginx.conf
    includes it, with its upstream and port on loopback and its files under ``work``."""
    server = NGINX_CONF.read_text()
    assert "server web:8000;" in server and "listen 8000;" in server, "deploy/nginx.conf: upstream or port moved"
    server = server.replace("server web:8000;", f"server 127.0.0.1:{upstream};").replace("listen 8000;", f"listen 127.0.0.1:{listen};")
    (work / "server.conf").write_text(server)
    user = "user root root;\n" if os.geteuid() == 0 else ""
    main = (f"{user}daemon off;\nworker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/error.log warn;\n"
            "events { worker_connections 1024; }\n"
            f"http {{\n  access_log off;\n  default_type application/octet-stream;\n"
            + "".join(f"  {kind}_temp_path {work}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
            + f"  include {work}/server.conf;\n}}\n")
    path = work / "nginx.conf"
    path.write_text(main)
    return path


@contextlib.contextmanager
def serve(behind_nginx: bool):
    """gunicorn with compose's settings on a loopback port, behind nginx or not; yields the base URL."""
    work = Path(tempfile.mkdtemp(prefix="ptbench-slow."))
    processes: list[subprocess.Popen] = []
    try:
        port = free_port()
        gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "dashboard.wsgi", "-c", str(GUNICORN_CONF),
                                     "--bind", f"127.0.0.1:{port}", "--access-logfile", os.devnull, "--log-level", "warning"],
                                    cwd=ROOT, env=dashboard_env(), stdout=subprocess.DEVNULL)
        processes.append(gunicorn)
        wait_listening(port, gunicorn)
        if behind_nginx:
            binary = nginx_binary()
            assert binary, "nginx is not installed (scripts/system_packages.sh installs it)"
            front = free_port()
            config = nginx_config(work, listen=front, upstream=port)
            subprocess.run([binary, "-t", "-q", "-c", str(config), "-p", str(work)], check=True, capture_output=True)
            processes.append(subprocess.Popen([binary, "-c", str(config), "-p", str(work)], stderr=subprocess.DEVNULL))
            wait_listening(front, processes[-1])
            port = front
        for _ in range(3):  # each worker's first request (imports, connections) is not what is timed
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/", timeout=60).read()
        yield f"http://127.0.0.1:{port}"
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT if process is processes[0] else signal.SIGTERM)  # both: quick shutdown
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
            if process.poll() is None:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


class SlowClients:
    """``count`` connections, each sending a request's headers one byte every ``interval`` s, never
    ending them, until ``stop()``; ``finished`` counts those the server answered or closed."""

    def __init__(self, base: str, count: int, path: str, interval: float = 0.2) -> None:
        self.host, self.port = base.removeprefix("http://").split(":")
        self.request = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n".encode()
        self.interval, self.stopped, self.finished = interval, threading.Event(), 0
        self.threads = [threading.Thread(target=self._drip, daemon=True) for _ in range(count)]
        self.lock = threading.Lock()

    def _drip(self) -> None:
        with socket.create_connection((self.host, int(self.port)), timeout=5) as sock:
            sock.sendall(self.request)
            padding = b"X-Slow: " + b"a" * 10_000
            for byte in padding:
                if self.stopped.wait(self.interval):
                    return
                try:
                    sock.sendall(bytes([byte]))
                except OSError:  # the server closed it (nginx's client_header_timeout)
                    break
        with self.lock:
            self.finished += 1

    def __enter__(self) -> SlowClients:
        for thread in self.threads:
            thread.start()
        time.sleep(1.0)  # every slow connection accepted and holding whatever it holds
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=5)


def timed_requests(url: str, count: int, wait: float) -> list[float | None]:
    """Seconds each of ``count`` ordinary requests took (None: no answer within ``wait`` s)."""
    times: list[float | None] = []
    for _ in range(count):
        begun = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=wait) as response:
                response.read()
                assert response.status == 200, response.status
            times.append(time.perf_counter() - begun)
        except (TimeoutError, urllib.error.URLError):
            times.append(None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=8, help="slow clients at once")
    parser.add_argument("--requests", type=int, default=10, help="ordinary requests timed while they hold on")
    parser.add_argument("--path", default="/api/v1/")
    parser.add_argument("--wait", type=float, default=5.0, help="seconds an ordinary request waits for its answer")
    args = parser.parse_args()
    rows = []
    for behind_nginx in (False, True):
        with serve(behind_nginx) as base, SlowClients(base, args.slow, args.path):
            times = timed_requests(base + args.path, args.requests, args.wait)
        answered = sorted(t for t in times if t is not None)
        rows.append(("nginx -> gunicorn" if behind_nginx else "gunicorn alone", len(answered),
                     answered[len(answered) // 2] * 1000 if answered else None, answered[-1] * 1000 if answered else None))
    print(f"# python -m bench.slow_clients --slow {args.slow} --requests {args.requests} --path {args.path} --wait {args.wait:g}")
    print(f"# {os.cpu_count()} CPUs; deploy/gunicorn.conf.py (3 sync workers) with and without deploy/nginx.conf, loopback; "
          f"{args.slow} clients sending headers one byte per 0.2 s throughout")
    print(f"{'server':<20}{'answered':>10}{'median ms':>11}{'max ms':>9}")
    for name, answered, median, slowest in rows:
        shown = (f"{median:>11.1f}{slowest:>9.1f}" if median is not None else f"{'-':>11}{'-':>9}")
        print(f"{name:<20}{f'{answered}/{args.requests}':>10}{shown}")


if __name__ == "__main__":
    main()
