"""How many cases a runner worker runs at once on its device, and what its case processes are told
about it (issue #44, docs/runner-processes.md, section 6).

Several cases share a GPU as ``bench/families_gpu.sh``'s runner streams do: each one's compile
overlaps the others', and each case holds the device's exclusive lock (``runner.engine.gpu_lock``)
while it times or autotunes. By default a GPU worker runs one case per 4 of its GPU's share of the
host's cores and per 32 GiB of its GPU's memory, at most 4 (an H200 on a 16-core share: 4); a CPU
worker runs one (its cases time on the cores the others would compile on). ``PTBENCH_CASES_AT_ONCE``
sets it. With more than one, each case's inductor gets its share of the cores as compile threads
(``TORCHINDUCTOR_COMPILE_THREADS``, unless set), and on the CPU the lock is taken too
(``PTBENCH_CPU_LOCK``).
"""
from __future__ import annotations

import os
import shutil
import subprocess

CORES_PER_CASE = 4
GIB_PER_CASE = 32
MAX_DEFAULT = 4


def host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def gpus_here(environ) -> tuple[int, float] | None:
    """(GPUs on this host, GiB of memory of this worker's GPU) from ``nvidia-smi``; None without one."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        text = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [[part.strip() for part in line.split(",")] for line in text.splitlines() if line.count(",") == 2]
    if not rows:
        return None
    visible = (environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0].strip()
    mine = next((row for row in rows if visible in (row[0], row[1])), rows[0])
    return len(rows), float(mine[2]) / 1024


def default_cases_at_once(*, device: str, cores: int, gpus: tuple[int, float] | None) -> int:
    """One case per ``CORES_PER_CASE`` cores of this GPU's share and per ``GIB_PER_CASE`` GiB of its
    memory, at most ``MAX_DEFAULT``; 1 on the CPU or when the GPU cannot be asked."""
    if device == "cpu" or gpus is None:
        return 1
    count, memory_gib = gpus
    share = cores // max(count, 1)
    return max(1, min(MAX_DEFAULT, share // CORES_PER_CASE, int(memory_gib // GIB_PER_CASE)))


def case_environment(cases_at_once: int, *, device: str, cores: int, environ) -> dict[str, str]:
    """The variables a worker running ``cases_at_once`` cases sets for its case processes."""
    if cases_at_once <= 1:
        return {}
    found = {}
    if "TORCHINDUCTOR_COMPILE_THREADS" not in environ:
        found["TORCHINDUCTOR_COMPILE_THREADS"] = str(max(1, cores // cases_at_once))
    if device == "cpu":
        found["PTBENCH_CPU_LOCK"] = "1"
    return found
