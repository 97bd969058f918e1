"""The case process of a distributed case: it owns the process group (docs/distributed.md).

It starts one process per rank (``python -m runner.engine.distributed.rank``), joined through a
file store in a directory of its own (no port to pick, so none to race for), and waits for them.
The ranks stay in the case's process group and follow the case (``lifetime.follow_parent``: they
get SIGKILL when the case process dies, even by kill -9), so the executor's time limit, a stopped
run and a dead runner end them with the case. When one rank fails, the others get
``RANK_GRACE_S`` to fail on their own (a peer's collective fails fast), then are killed: a rank
left waiting in a collective never hangs the case. A collective that waits past the process
group's timeout (``PTBENCH_COLLECTIVE_TIMEOUT_S``) fails its rank as ``timeout``.

The case's status is the first failing rank's (the root cause: the others fail because it did);
a rank that died without an error file is a crash. Rank 0's record (its phases' metrics) stays.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.engine import lifetime

WORLD_SIZE_ENV = "PTBENCH_WORLD_SIZE"
RANK_GRACE_S = 10.0
POLL_S = 0.1


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
        processes = [subprocess.Popen(rank_command(workdir, out.path, rank, world), env=env, stdin=subprocess.DEVNULL)
                     for rank in range(world)]
        killed = wait_ranks(processes)
        _merge(record, out.read(), workdir, processes, killed)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def wait_ranks(processes: list[subprocess.Popen], grace_s: float = RANK_GRACE_S) -> list[int]:
    """Wait for every rank; once one fails, give the rest ``grace_s``, then kill them. The ranks killed."""
    failed_at = None
    while True:
        codes = [process.poll() for process in processes]
        if all(code is not None for code in codes):
            return []
        if failed_at is None and any(code not in (None, 0) for code in codes):
            failed_at = time.monotonic()
        if failed_at is not None and time.monotonic() - failed_at > grace_s:
            left = [rank for rank, code in enumerate(codes) if code is None]
            for rank in left:
                processes[rank].kill()
            return left
        time.sleep(POLL_S)


def _merge(record, written: dict | None, workdir: Path, processes: list[subprocess.Popen], killed: list[int]) -> None:
    for key, value in (written or {}).items():
        if key not in ("phase_reached",) and hasattr(record, key):
            setattr(record, key, value)
    exits = [process.returncode for process in processes]
    record.environment.setdefault("distributed", {})["rank_exits"] = [
        "killed after a peer failed" if rank in killed else _exit_text(code) for rank, code in enumerate(exits)]
    errors = []
    for path in workdir.glob("rank*.error.json"):
        try:
            errors.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    if errors:
        first = min(errors, key=lambda item: item["at"])
        record.status, record.error = first["status"], first["error"]
        return
    died = [(rank, code) for rank, code in enumerate(exits) if code != 0 and rank not in killed]
    if died:
        rank, code = died[0]
        record.status = "crash"
        record.error = {"type": "RankDied", "message": f"rank {rank} {_exit_text(code)} without an error (see the case log)"}


def _exit_text(code: int | None) -> str:
    if code is None or code >= 0:
        return f"exited with code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"
