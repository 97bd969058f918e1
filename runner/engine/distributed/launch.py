"""The case process of a distributed case: it owns the process group (docs/distributed.md).

It starts one process per rank (``python -m runner.engine.distributed.rank``), joined through a
file store in a directory of its own (no port to pick, so none to race for), and waits for them.
The ranks stay in the case's process group and follow the case (``lifetime.follow_parent``: they
get SIGKILL when the case process dies, even by kill -9), so the executor's time limit, a stopped
run and a dead runner end them with the case. When one rank fails, the others get
``RANK_GRACE_S`` (``PTBENCH_RANK_GRACE_S``) to fail on their own (a peer's collective fails fast), then are killed: a rank
left waiting in a collective never hangs the case. A collective that waits past the process
group's timeout (``PTBENCH_COLLECTIVE_TIMEOUT_S``) fails its rank as ``timeout``.

The case's status is the root cause's: a rank that died without an error file (a signal, an
abort) is a crash and comes first, as its peers then fail because it is gone, unless its output
says NCCL's watchdog aborted it for a collective past the timeout (a timeout, as a consequence can
be); else the first error a rank wrote. Each rank's output goes through the case, line by line, to
the case's log (as it comes), and its last lines are kept for that. Rank 0's record (its phases'
metrics) stays.
"""
from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from runner.engine import lifetime
from runner.engine.failures import process_excerpt

WORLD_SIZE_ENV = "PTBENCH_WORLD_SIZE"
RANK_GRACE_S = 10.0
RANK_GRACE_ENV = "PTBENCH_RANK_GRACE_S"  # the tests' shorter grace (tests/runner/test_distributed.py)
POLL_S = 0.1
TAIL_LINES = 60
# What NCCL's watchdog writes before it aborts a rank whose collective ran past the timeout.
NCCL_WATCHDOG_TIMEOUT = "Watchdog caught collective operation timeout"


def options(spec):
    """The workload's ``Distributed`` options, or None for a single-process case."""
    from workloads.registry import get_workload

    return getattr(get_workload(spec.workload, allow_import=spec.import_allowed), "distributed", None)


def world_size(device: str) -> int:
    """``PTBENCH_WORLD_SIZE``, else 2 on the CPU and every visible GPU on CUDA."""
    if os.environ.get(WORLD_SIZE_ENV):
        return int(os.environ[WORLD_SIZE_ENV])
    if device == "cuda":
        import torch

        return torch.cuda.device_count()
    return 2


def rank_command(workdir: Path, result: Path, rank: int, world: int) -> list[str]:
    return [sys.executable, "-m", "runner.engine.distributed.rank", "--spec", str(workdir / "spec.json"),
            "--store", str(workdir / "store"), "--result", str(result), "--errors", str(workdir),
            "--rank", str(rank), "--world", str(world)]


def rank_environment(device: str) -> dict[str, str]:
    env = {**os.environ, lifetime.PARENT_ENV: str(os.getpid())}
    if device == "cpu":
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only
    return env


def run(spec, record, out) -> None:
    """Run ``spec`` on its ranks; fill ``record`` from rank 0's and the ranks' errors."""
    world = world_size(spec.device)
    if world < 2:
        record.status = "eager_error"
        record.error = {"type": "WorldSize", "message": f"a distributed case needs 2 or more ranks; this host gives {world} "
                        f"({'visible GPUs' if spec.device == 'cuda' else WORLD_SIZE_ENV})"}
        return
    workdir = Path(tempfile.mkdtemp(prefix="ptbench-ranks-"))
    processes: list[subprocess.Popen] = []
    try:
        spec.write(workdir / "spec.json")
        env = rank_environment(spec.device)
        processes = [subprocess.Popen(rank_command(workdir, out.path, rank, world), env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for rank in range(world)]
        tails = [_Tail(process) for process in processes]
        ended = wait_ranks(processes, grace_s=float(os.environ.get(RANK_GRACE_ENV) or RANK_GRACE_S))
        _merge(record, out.read(), workdir, processes, ended, [tail.text() for tail in tails])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def wait_ranks(processes: list[subprocess.Popen], grace_s: float = RANK_GRACE_S) -> dict[int, float | None]:
    """Wait for every rank; once one fails, give the rest ``grace_s``, then kill them. Per rank, the
    earliest time (``time.time()``) it can have ended (None: killed here)."""
    ended: dict[int, float | None] = {}
    failed_at = None
    while True:
        codes = [process.poll() for process in processes]
        for rank, code in enumerate(codes):
            if code is not None and rank not in ended:
                ended[rank] = time.time() - POLL_S
        if len(ended) == len(processes):
            return ended
        if failed_at is None and any(code not in (None, 0) for code in codes):
            failed_at = time.monotonic()
        if failed_at is not None and time.monotonic() - failed_at > grace_s:
            for rank, code in enumerate(codes):
                if code is None:
                    processes[rank].kill()
                    ended[rank] = None
            return ended
        time.sleep(POLL_S)


class _Tail:
    """A rank's output, forwarded line by line to this process's stderr (the case's log); the last
    ``TAIL_LINES`` kept. A reader thread: a process the rank started may hold the pipe open."""

    def __init__(self, process: subprocess.Popen):
        self.lines: collections.deque[bytes] = collections.deque(maxlen=TAIL_LINES)
        self.thread = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()

    def text(self) -> str:
        self.thread.join(timeout=1.0)
        return b"".join(self.lines).decode("utf-8", errors="replace")


def death(rank: int, code: int | None, tail: str) -> tuple[str, dict]:
    """(status, error) of a rank that ended without an error file."""
    if NCCL_WATCHDOG_TIMEOUT in tail:
        message = f"rank {rank}: a collective ran past the process group's timeout (NCCL's watchdog: {_exit_text(code)})"
        return "timeout", process_excerpt("CollectiveTimeout", message, tail)
    return "crash", process_excerpt("RankDied", f"rank {rank} {_exit_text(code)} without an error", tail)


def _merge(record, written: dict | None, workdir: Path, processes: list[subprocess.Popen], ended: dict[int, float | None],
           tails: list[str]) -> None:
    """Rank 0's record, with the first failure's status and error: an error file's, or a death's."""
    for key, value in (written or {}).items():
        if key not in ("phase_reached",) and hasattr(record, key):
            setattr(record, key, value)
    exits = [process.returncode for process in processes]
    record.environment.setdefault("distributed", {})["rank_exits"] = [
        "killed after a peer failed" if ended.get(rank, 0) is None else _exit_text(code) for rank, code in enumerate(exits)]
    failures = []  # (a crash first?, when, status, error)
    for rank, code in enumerate(exits):
        path = workdir / f"rank{rank}.error.json"
        if path.exists():
            try:
                written_error = json.loads(path.read_text())
                failures.append((1, written_error["at"], written_error["status"], written_error["error"]))
                continue
            except (OSError, ValueError, KeyError):
                pass
        if code != 0 and ended.get(rank) is not None:
            status, error = death(rank, code, tails[rank])
            failures.append((0 if status == "crash" else 1, ended[rank], status, error))
    if failures:
        *_, record.status, record.error = min(failures, key=lambda failure: failure[:2])


def _exit_text(code: int | None) -> str:
    if code is None or code >= 0:
        return f"exited with code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"
