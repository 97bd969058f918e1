"""Case processes live no longer than the runner that started them (docs/runner-processes.md).

A case process (``python -m runner case``, a compile pair's ``compile-once`` side, the environment
probe) runs in a session of its own, so that its whole process group (inductor's compile workers,
whatever the workload starts) can be killed at once; the same choice hides it from signals meant
for the runner. Three things make sure nothing of it outlives its runner:

- the parent (``start`` / ``end``) tracks every group in flight; ``end`` kills what is left of a
  group and reaps it, and ``kill_in_flight`` (the CLI's SIGTERM/SIGINT handler, ``atexit``) kills
  them all;
- the child (``follow_parent``, first thing in ``python -m runner case|compile-once|environment``)
  asks Linux for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``: also after a kill -9 no
  handler sees), or watches ``os.getppid()`` where prctl is missing; a case and a side also fork a
  sentinel that kills the group once the case process is gone, so its compile workers go with it;
- every group in flight is recorded under the runtime directory, per GPU (``device_slot``), with
  a mark its processes carry in their environment (``MARK_ENV``): a worker that starts ends what
  an earlier, dead runner left there (``end_stale_cases``).

``PR_SET_PDEATHSIG`` fires when the *thread* that started the child exits: ``start`` must be
called from a thread that outlives the child (``run_child`` waits for it in the same thread).

Standard library only: the child side runs in the build's interpreter.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

PARENT_ENV = "PTBENCH_CASE_PARENT"  # pid of the process that started this case process
MARK_ENV = "PTBENCH_CASE_MARK"  # one per case process; everything it starts inherits it
RUNTIME_ENV = "PTBENCH_RUNTIME_DIR"  # where groups in flight are recorded (default /tmp/ptbench-<uid>)
PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.2  # how often a sentinel or watchdog asks whether its parent is still there
STALE_KILL_WAIT_S = 10.0


# -- the child side ----------------------------------------------------------------------------


def set_parent_death_signal(signum: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``signum`` to this process when its parent (thread) exits; False where
    prctl is missing (not Linux, no libc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def follow_parent(*, sentinel: bool = True) -> str:
    """Make this case process die with the process that started it (``PARENT_ENV``); returns how:
    "prctl", "watchdog", or "none" (started by hand: nothing to follow). With ``sentinel``, a forked
    sentinel kills this process group once this process is gone (its compile workers, anything the
    workload started). Call first, before any thread or child is started."""
    parent = int(os.environ.pop(PARENT_ENV, "0") or 0)  # popped: a process this one starts follows this one
    if not parent:
        return "none"
    how = "prctl" if set_parent_death_signal() else "watchdog"
    direct = os.getppid() == parent
    if not direct:
        if not _exists(parent):  # the parent died before prctl: nobody would read a result
            os._exit(1)
        how = "watchdog"  # started through a wrapper (a script that runs the build's python): watch the runner
    if sentinel and os.getpgrp() == os.getpid():
        _fork_sentinel()
    if how == "watchdog":
        threading.Thread(target=_watch_parent, args=(parent, direct), name="ptbench-parent-watchdog", daemon=True).start()
    return how


def _exists(pid: int) -> bool:
    """Whether ``pid`` runs: on Linux a zombie (a runner killed, not yet reaped) does not."""
    if os.path.isdir("/proc/self"):
        return is_running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(parent: int, direct: bool) -> None:
    while os.getppid() == parent if direct else _exists(parent):
        time.sleep(WATCH_INTERVAL_S)
    _kill(-os.getpgrp())
    os._exit(1)


def _fork_sentinel() -> None:
    """A forked child that holds no file of the case (a pipe the parent reads must see its end)
    and kills the case's group once the case process is gone (it is reparented then)."""
    case = os.getpid()
    try:
        if os.fork():
            return
    except OSError:  # no process to spare: the case runs without it (its own death signal still holds)
        return
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
            signal.signal(signum, signal.SIG_DFL if signum == signal.SIGTERM else signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 65536)
        while os.getppid() == case:
            time.sleep(WATCH_INTERVAL_S)
        _kill(-case)  # the case's group, this sentinel included
    finally:
        os._exit(0)


# -- the parent side ---------------------------------------------------------------------------

_in_flight: dict[int, Path | None] = {}  # pid (= pgid) of each case process started here -> its record
_lock = threading.RLock()  # re-entered by a signal handler that interrupts start/end


def _kill(target: int) -> None:
    """SIGKILL a process (``target`` > 0) or a process group (< 0); gone or not ours is fine."""
    try:
        if target < 0:
            os.killpg(-target, signal.SIGKILL)
        else:
            os.kill(target, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pid: int) -> None:
    _kill(-pid)


def start(command: list[str], *, env: dict[str, str], spawn=None, **popen_kwargs) -> subprocess.Popen:
    """Start a case process in a session of its own, marked, recorded and tracked; ``end`` it.
    ``spawn(command, env=, **popen_kwargs)``: what starts it instead of ``subprocess.Popen`` (a warm
    process's fork, ``runner.engine.warm_start``), returning an object with Popen's ``pid``,
    ``wait``, ``poll``, ``send_signal`` and ``returncode``."""
    mark = uuid.uuid4().hex
    env = {**env, PARENT_ENV: str(os.getpid()), MARK_ENV: mark}
    if spawn is None:
        process = subprocess.Popen(command, env=env, start_new_session=True, **popen_kwargs)
    else:
        process = spawn(command, env=env, **popen_kwargs)
    with _lock:
        _in_flight[process.pid] = _record(process.pid, mark, command)
    return process


def end(process: subprocess.Popen) -> None:
    """Kill whatever is left of the process's group, reap it, forget it."""
    kill_group(process.pid)
    process.wait()
    with _lock:
        record = _in_flight.pop(process.pid, None)
    if record is not None:
        record.unlink(missing_ok=True)


def kill_in_flight() -> list[int]:
    """SIGKILL every case process group started here and still tracked (a signal, an exit); the
    pids. ``end`` still reaps each."""
    with _lock:
        pids = list(_in_flight)
    for pid in pids:
        kill_group(pid)
    return pids


atexit.register(kill_in_flight)


class Terminated(KeyboardInterrupt):
    """A stop signal (SIGTERM, SIGHUP) arrived: the cases in flight were killed. A KeyboardInterrupt,
    so that what stops on Ctrl-C stops on it the same way."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_on_signals() -> None:
    """In a runner's main thread: on SIGTERM, SIGHUP or SIGINT, kill every case in flight, then
    raise ``Terminated`` (KeyboardInterrupt for SIGINT) where the main thread is."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_stop_signal)


def _on_stop_signal(signum: int, _frame) -> None:
    kill_in_flight()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


# -- what runs where: per-GPU records, stale groups ---------------------------------------------


def runtime_dir() -> Path:
    return Path(os.environ.get(RUNTIME_ENV) or f"/tmp/ptbench-{os.getuid()}")


def device_slot(environ: dict[str, str] | None = None) -> str:
    """The device this process's cases run on: ``gpu-<CUDA_VISIBLE_DEVICES>``, ``gpu-all`` on a GPU
    host without it, else ``cpu``."""
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES", "").strip()
    if visible:
        return "gpu-" + re.sub(r"[^A-Za-z0-9,._-]", "_", visible)[:100]
    return "gpu-all" if "CUDA_VISIBLE_DEVICES" not in env and os.path.exists("/dev/nvidiactl") else "cpu"


def _record(pid: int, mark: str, command: list[str]) -> Path | None:
    """Write the record of a case process group (its pid = pgid, start time, mark, owner); None
    where the runtime directory cannot be written (the case still runs; only a later cleanup
    would miss it)."""
    folder = runtime_dir() / device_slot()
    path = folder / f"{pid}-{mark[:12]}.json"
    record = {"pid": pid, "started": start_ticks(pid), "mark": mark, "owner": os.getpid(),
              "owner_started": start_ticks(os.getpid()), "command": " ".join(command)[:300]}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
    except OSError as exc:
        print(f"ptbench: cannot record case process {pid} in {folder}: {exc}", file=sys.stderr)
        return None
    return path


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, /proc/<pid>/stat), or None when it is gone:
    a pid reused by another process has another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[19])


def alive(pid: int, started: int | None) -> bool:
    """Whether the process that started at ``started`` is still running (not a zombie)."""
    return started is not None and is_running(pid) and start_ticks(pid) == started


def processes_with_env(name: str, value: str, *, read: tuple[str, ...] = ()) -> list[dict]:
    """{pid, ppid, pgid, command, env} of each process (that this user may read) whose environment
    has ``name=value``: inherited by everything a process starts, even after it left the group.
    ``env``: the variables named in ``read`` that it has."""
    wanted = f"\0{name}={value}\0".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
            if wanted not in b"\0" + environ + b"\0":
                continue
            command = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            stat = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if stat[0] == "Z":  # a zombie: already dead, waiting to be reaped
            continue
        variables = dict(item.partition(b"=")[::2] for item in environ.split(b"\0") if b"=" in item) if read else {}
        env = {key: variables[key.encode()].decode(errors="replace") for key in read if key.encode() in variables}
        found.append({"pid": int(entry.name), "ppid": int(stat[1]), "pgid": int(stat[2]), "command": command, "env": env})
    return found


def end_stale_cases(slot: str | None = None) -> list[dict]:
    """End the case processes recorded on ``slot`` (default: this process's device) whose owner is
    gone: every live process carrying the record's mark, and the rest of the recorded group. Returns
    {pid, owner, command, killed: [pids], left: [pids still there after STALE_KILL_WAIT_S]} per record
    that had any; records of live owners (another worker on the same device) are left alone."""
    folder = runtime_dir() / (slot or device_slot())
    ended = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text())
            owner, mark, pid = int(record["owner"]), str(record["mark"]), int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if alive(owner, record.get("owner_started")):
            continue
        victims = {p["pid"] for p in processes_with_env(MARK_ENV, mark)}
        if alive(pid, record.get("started")):
            victims.add(pid)
            kill_group(pid)
        for victim in victims:
            _kill(victim)
        left = _wait_gone(victims, STALE_KILL_WAIT_S)
        path.unlink(missing_ok=True)
        if victims:
            ended.append({"pid": pid, "owner": owner, "command": record.get("command", ""), "killed": sorted(victims), "left": left})
    return ended


def _wait_gone(pids: set[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        left = sorted(p for p in pids if is_running(p))
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False
