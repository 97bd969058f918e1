"""One case at a time on a GPU while it times: an exclusive file lock per GPU (docs/families.md, "GPU runs").

Several runner processes (streams) share one GPU so that one compiles while another times; a case
holds this lock from its warm-up through its memory measurement, and again around its profiled
call and a float64 accuracy run, never while it compiles. The lock is ``fcntl.flock`` on
``<PTBENCH_GPU_LOCK_DIR or the temp dir>/ptbench-gpu-<GPU UUID>.lock``: every process that names the
same GPU, whatever its ``CUDA_VISIBLE_DEVICES``, takes the same file; the kernel drops the lock when
a process dies. On CPU nothing is locked. The case's environment says how long it waited
(``gpu_lock_wait_s``) and what it held (``gpu_lock``).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

LOCK_DIR_ENV = "PTBENCH_GPU_LOCK_DIR"


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[float]:
    """Hold the exclusive lock on ``path`` (created if absent) for the block; yields the seconds waited."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        started = time.monotonic()
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def lock_path(gpu_key: str, directory: str | None = None) -> Path:
    """The lock file of the GPU named ``gpu_key`` (its UUID), in ``directory`` or $PTBENCH_GPU_LOCK_DIR
    or the system temp dir."""
    base = directory or os.environ.get(LOCK_DIR_ENV) or tempfile.gettempdir()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in gpu_key)
    return Path(base) / f"ptbench-gpu-{safe}.lock"


def cuda_key() -> str:
    """The current CUDA device's UUID; where torch does not expose it, its physical index."""
    import torch  # noqa: PLC0415 (the lock itself needs no torch)

    index = torch.cuda.current_device()
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    raw = getattr(uuid, "bytes", None)  # torch's _CUuuid: 16 bytes (its str is the dashed hex form)
    if raw is not None:
        return "GPU-" + bytes(raw).hex()
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return f"index-{visible[index] if index < len(visible) else index}"


class DeviceLock:
    """A case's holds of its GPU's lock: ``hold(step)`` around each step that runs on it exclusively.
    Without a path (CPU) every hold is a no-op and the environment is empty."""

    def __init__(self, path: Path | None):
        self.path = path
        self.wait_s = 0.0
        self.held_s = 0.0
        self.steps: list[str] = []

    @classmethod
    def for_device(cls, device: str) -> DeviceLock:
        return cls(lock_path(cuda_key()) if device == "cuda" else None)

    @contextlib.contextmanager
    def hold(self, step: str) -> Iterator[None]:
        if self.path is None:
            yield
            return
        with exclusive(self.path) as waited:
            self.wait_s += waited
            self.steps.append(step)
            started = time.monotonic()
            try:
                yield
            finally:
                self.held_s += time.monotonic() - started

    def environment(self) -> dict:
        if self.path is None:
            return {}
        return {"gpu_lock_wait_s": round(self.wait_s, 3),
                "gpu_lock": {"file": str(self.path), "held_s": round(self.held_s, 3), "steps": list(self.steps)}}
