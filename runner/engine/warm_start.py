"""A warm process: a build's interpreter with torch and the model libraries already imported (CUDA
not initialised) that forks each case, so that a case does not pay the imports (issue #44,
docs/runner-processes.md, section 7).

The server (``python -m runner warm-server --socket PATH``) imports, then listens on a Unix socket.
A runner (a worker's pool process) connects once per case and sends the case's command line, its
environment, its working directory and, as a passed file descriptor, its log. The server forks; the
child starts a session of its own (a process group that ``lifetime.end`` kills whole), points its
standard streams at the log, takes the case's environment (its own inductor and Triton cache
directories among it: nothing reads them before the case), and runs ``python -m runner case`` in
that process. The server answers the child's pid at once and its exit status once it has reaped it.

The case follows the runner that asked for it as a fresh case process does (``lifetime.follow_parent``:
the runner is not its parent, so the watchdog watches it; Linux's parent-death signal follows the
server), and forks its sentinel. The server follows the worker that started it. Standard library
only at import: the server side runs in the build's interpreter.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable

# What the warm process imports besides torch and the case code: the compiler (dynamo, inductor: no
# thread, no compile worker starts at import) and the families' libraries, where installed. Their
# settings read from the environment at import are the worker's, as a fresh case's would be (a case
# with a variant's own environment variables starts fresh: runner.engine.executor).
DEFAULT_IMPORTS = ("torch._dynamo", "torch._inductor.compile_fx", "transformers", "transformers.modeling_utils", "timm", "torchvision")
COMPILER_IMPORTS = ",".join(DEFAULT_IMPORTS[:2])  # without the model libraries
IMPORTS_ENV = "PTBENCH_WARM_IMPORTS"
NVML_CHECK_ENV = "PYTORCH_NVML_BASED_CUDA_CHECK"  # comma-separated module names instead of DEFAULT_IMPORTS
SPAWNED_AT_ENV = "PTBENCH_CASE_SPAWNED_AT"  # time.time() when the runner asked for the case process
STARTED_BY_ENV = "PTBENCH_CASE_STARTED_BY"  # "warm fork" or "subprocess"
SERVER_NAME, CASE_NAME = b"ptbench-warm", b"ptbench-case"  # process names (/proc/<pid>/comm)
PR_SET_NAME = 15
READY_TIMEOUT_S = 300.0


class WarmStartUnavailable(OSError):
    """The warm process could not start the case (gone, refused): start a fresh one instead."""


# -- the server (in the build's interpreter) ----------------------------------------------------


def set_process_name(name: bytes) -> None:
    try:
        ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def warm_imports() -> dict:
    """Import torch, the case code and the model libraries; {imported, missing, imports_s}. Nothing
    here runs a torch operation or initialises CUDA (neither survives a fork)."""
    started = time.monotonic()
    # torch.cuda.is_available() (which an import may call) asks NVML instead of initialising the CUDA
    # driver, which no forked child could then use. Only while importing: a case asks as it would fresh.
    nvml_check = os.environ.get(NVML_CHECK_ENV)
    os.environ[NVML_CHECK_ENV] = "1"
    import torch  # noqa: PLC0415

    import runner.engine.case  # noqa: F401, PLC0415 (the case code: torch and our engine; the CLI started this process)

    names = [n.strip() for n in os.environ.get(IMPORTS_ENV, ",".join(DEFAULT_IMPORTS)).split(",") if n.strip()]
    imported, missing = [], {}
    for name in names:
        try:
            importlib.import_module(name)
            imported.append(name)
        except Exception as exc:  # noqa: BLE001 (a library this build lacks is imported by no case)
            missing[name] = f"{type(exc).__name__}: {exc}"[:200]
    if nvml_check is None:
        os.environ.pop(NVML_CHECK_ENV, None)
    else:
        os.environ[NVML_CHECK_ENV] = nvml_check
    if torch.cuda.is_initialized():  # a fork could not use the GPU: the worker's cases start fresh instead
        raise SystemExit(f"an import initialised CUDA (imported: {', '.join(imported)}): no warm process")
    return {"imported": imported, "missing": missing, "imports_s": round(time.monotonic() - started, 3)}


def serve(socket_path: Path, *, main: Callable[[list[str]], int | None]) -> None:
    """Import, listen on ``socket_path``, fork a case per request that runs ``main`` (the CLI's, which
    started this server) on the request's arguments; never returns."""
    set_process_name(SERVER_NAME)
    facts = warm_imports()
    print(f"warm process {os.getpid()}: {json.dumps(facts)}", flush=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    socket_path.unlink(missing_ok=True)
    listener.bind(str(socket_path) + ".new")
    listener.listen(64)
    os.replace(str(socket_path) + ".new", socket_path)  # ready: the socket's name appears only now
    open_connections: set[int] = set()
    guard = threading.Lock()
    while True:
        connection, _ = listener.accept()
        try:
            request, fds = _receive(connection)
        except (OSError, ValueError):
            connection.close()
            continue
        with guard:
            open_connections.add(connection.fileno())
            closing = [listener.fileno(), *open_connections]
        pid = os.fork()
        if pid == 0:
            _run_case_child(request, fds, closing=closing, main=main)
        for fd in fds:
            os.close(fd)
        threading.Thread(target=_answer, args=(connection, pid, facts, open_connections, guard), daemon=True).start()


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 4)
    while not data.endswith(b"\n"):
        more = connection.recv(1 << 20)
        if not more:
            raise ValueError("the request ended early")
        data += more
    return json.loads(data), list(fds)


def _answer(connection: socket.socket, pid: int, facts: dict, open_connections: set, guard: threading.Lock) -> None:
    try:
        connection.sendall(json.dumps({"pid": pid, "imports_s": facts["imports_s"]}).encode() + b"\n")
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    try:
        connection.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    except OSError:
        pass
    with guard:
        open_connections.discard(connection.fileno())
    connection.close()


def _run_case_child(request: dict, fds: list[int], *, closing: list[int], main: Callable[[list[str]], int | None]) -> None:
    """In the forked child: become the case process, run ``python -m runner ARGV``, exit."""
    code = 1
    try:
        os.setsid()
        set_process_name(CASE_NAME)
        for fd in closing:  # the server's sockets: a case holds none of them
            try:
                os.close(fd)
            except OSError:
                pass
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[0], 2)
        for fd in (null, *fds):
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        if "TORCH_TRACE" in os.environ or "TORCH_LOGS" in os.environ:
            _read_log_settings_again()
        sys.argv = ["python -m runner", *request["argv"]]
        code = main(request["argv"]) or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 (the log says why; the runner reads the exit)
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _read_log_settings_again() -> None:
    """torch reads TORCH_LOGS and TORCH_TRACE at its import, in the warm process (without them):
    read them again for this case, with a trace handler of its own (the server's has no directory)."""
    import torch._logging._internal as internal  # noqa: PLC0415

    internal.LOG_TRACE_HANDLER = None
    internal._init_logs()


# -- the runner's side --------------------------------------------------------------------------


class WarmChild:
    """A case process a warm process forked, as ``lifetime`` and ``run_child`` use a Popen."""

    def __init__(self, connection: socket.socket, pid: int, args: list[str]):
        self._connection, self.pid, self.args = connection, pid, args
        self.returncode: int | None = None
        self._buffer = b""

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self._connection], [], [], left)
            if not readable:
                raise subprocess.TimeoutExpired(self.args, timeout)
            try:
                chunk = self._connection.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:  # the warm process is gone: its children got SIGKILL with it (prctl)
                self._buffer += json.dumps({"returncode": -9}).encode() + b"\n"
                break
            self._buffer += chunk
        self.returncode = int(json.loads(self._buffer.split(b"\n", 1)[0])["returncode"])
        self._connection.close()
        return self.returncode

    def poll(self) -> int | None:
        try:
            return self.wait(timeout=0)
        except subprocess.TimeoutExpired:
            return None

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass


class WarmStarter:
    """Asks the warm process at ``socket_path`` (server pid ``server``) for case processes (``spawn``,
    for ``lifetime.start``)."""

    def __init__(self, socket_path: str | Path, python: str, server: int | None = None):
        self.socket_path, self.python, self.server = str(socket_path), python, server

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until the warm process listens (it is still importing after its worker started); raises
        WarmStartUnavailable when it is gone or not ready in time."""
        deadline = time.monotonic() + timeout_s
        while not os.path.exists(self.socket_path):
            gone = self.server is not None and not _running(self.server)
            if gone or time.monotonic() > deadline:
                raise WarmStartUnavailable(f"the warm process at {self.socket_path} is {'gone' if gone else 'not ready'}")
            time.sleep(0.05)

    def spawn(self, command: list[str], *, env: dict, cwd, stdout, stdin=None, stderr=None) -> WarmChild:
        """Fork ``command`` (``[python, "-m", "runner", ...]``) in the warm process; its output to
        ``stdout`` (a file). Raises WarmStartUnavailable when the warm process cannot."""
        if command[1:3] != ["-m", "runner"]:
            raise WarmStartUnavailable(f"not a runner command: {command[:3]}")
        self.wait_ready()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(30)
            connection.connect(self.socket_path)
            env = {**env, SPAWNED_AT_ENV: repr(time.time()), STARTED_BY_ENV: "warm fork"}
            request = {"argv": command[3:], "env": env, "cwd": str(cwd)}
            socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], [stdout.fileno()])
            reply = b""
            while b"\n" not in reply:
                chunk = connection.recv(4096)
                if not chunk:
                    raise WarmStartUnavailable("the warm process closed the connection before it forked the case")
                reply += chunk
        except OSError as exc:
            connection.close()
            raise WarmStartUnavailable(f"warm process at {self.socket_path}: {exc}") from exc
        line, _, rest = reply.partition(b"\n")
        child = WarmChild(connection, int(json.loads(line)["pid"]), command)
        child._buffer = rest
        return child


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class WarmProcess:
    """The server process of one interpreter, started by a worker (``start``), stopped with it."""

    def __init__(self, python: str, socket_path: Path, process: subprocess.Popen, log_path: Path):
        self.python, self.socket_path, self.process, self.log_path = python, socket_path, process, log_path

    @classmethod
    def launch(cls, python: str, directory: Path, env: dict) -> WarmProcess:
        """Start the warm process of ``python`` (``env``: a case's, without its caches); it listens
        once it has imported (``starter().wait_ready()``). Call from a thread that lives as long as
        the warm process should: it dies with that thread (``lifetime.follow_parent``)."""
        from runner.engine.lifetime import PARENT_ENV  # noqa: PLC0415

        directory.mkdir(parents=True, exist_ok=True)
        socket_path = directory / f"warm-{os.getpid()}-{abs(hash(python)) % 10**8}.sock"
        log_path = socket_path.with_suffix(".log")
        with open(log_path, "wb") as log:
            process = subprocess.Popen([python, "-m", "runner", "warm-server", "--socket", str(socket_path)],
                                       env={**env, PARENT_ENV: str(os.getpid())}, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        return cls(python, socket_path, process, log_path)

    @classmethod
    def start(cls, python: str, directory: Path, env: dict) -> WarmProcess:
        """``launch``, and return once it listens; raises WarmStartUnavailable when it does not."""
        warm = cls.launch(python, directory, env)
        try:
            warm.starter().wait_ready()
        except WarmStartUnavailable as exc:
            warm.stop()
            raise WarmStartUnavailable(f"{exc}:\n{warm.log_path.read_text(errors='replace')[-2000:]}") from None
        return warm

    def starter(self) -> WarmStarter:
        return WarmStarter(self.socket_path, self.python, server=self.process.pid)

    def imports(self) -> str:
        """The server's own line about what it imported (its log's first line)."""
        try:
            return self.log_path.read_text(errors="replace").splitlines()[0]
        except (OSError, IndexError):
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.socket_path.unlink(missing_ok=True)
