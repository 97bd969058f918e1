"""How many cases a runner worker runs at once on its device, and what its case processes are told
about it (issue #44, docs/runner-processes.md, section 6).

Several cases share a GPU as ``bench/families_gpu.sh``'s runner streams do: each one's compile
overlaps the others', and each case holds the device's exclusive lock (``runner.engine.gpu_lock``)
while it times or autotunes. By default a GPU worker runs one case per 4 of its GPU's share of the
host's cores and per 32 GiB of its GPU's memory, at most 4 (an H200 on a 16-core share: 4); a CPU
worker runs one (its cases time on the cores the others would compile on). ``PTBENCH_CASES_AT_ONCE``
sets it. With more than one, each case's inductor gets its share of the cores as compile threads
(``TORCHINDUCTOR_COMPILE_THREADS``, unless set), and on the CPU the lock is taken too
(``PTBENCH_CPU_LOCK``). With ``PTBENCH_TIMING_CPUS=auto`` on a GPU, the worker also splits its GPU's
share of the cores (``cpu_plan``): the cases compile on all but the last ``timing_cores`` of them
(``PTBENCH_CASE_CPUS``), and whichever case holds the GPU's lock moves the thread that times onto
those last ones (``PTBENCH_TIMING_CPUS``). Opt-in: on the lent H200 VMs it did not steady the
speedups (docs/runner-processes.md, section 6, "Timing cores").
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import NamedTuple

from runner.engine.gpu_lock import CASE_CPUS_ENV, TIMING_CPUS_ENV, format_cpus

CORES_PER_CASE = 4
GIB_PER_CASE = 32
MAX_DEFAULT = 4


def allowed_cpus() -> list[int]:
    """The cores this worker may run on (its affinity)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def host_cores() -> int:
    return len(allowed_cpus())


class GpuShare(NamedTuple):
    count: int  # GPUs on this host
    memory_gib: float  # this worker's GPU's memory
    index: int = 0  # this worker's GPU among them (its row in nvidia-smi)


def gpus_here(environ) -> GpuShare | None:
    """This host's GPUs and this worker's (``CUDA_VISIBLE_DEVICES``' first) from ``nvidia-smi``; None without one."""
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
    index = next((i for i, row in enumerate(rows) if visible in (row[0], row[1])), 0)
    return GpuShare(len(rows), float(rows[index][2]) / 1024, index)


def default_cases_at_once(*, device: str, cores: int, gpus: tuple | None) -> int:
    """One case per ``CORES_PER_CASE`` cores of this GPU's share and per ``GIB_PER_CASE`` GiB of its
    memory, at most ``MAX_DEFAULT``; 1 on the CPU or when the GPU cannot be asked."""
    if device == "cpu" or gpus is None:
        return 1
    count, memory_gib = gpus[0], gpus[1]
    share = cores // max(count, 1)
    return max(1, min(MAX_DEFAULT, share // CORES_PER_CASE, int(memory_gib // GIB_PER_CASE)))


def timing_cores(share: int) -> int:
    """How many of a GPU's ``share`` of cores its timing case keeps to itself: 2 from 12 cores (the
    timing thread and what the CUDA driver and the case's other threads wake for), 1 from 4, else 0."""
    return 2 if share >= 12 else 1 if share >= 4 else 0


def cpu_plan(allowed, *, gpus: int, gpu_index: int, host_cpus: int | None = None) -> tuple[list[int], list[int]] | None:
    """(the cores this GPU's cases run and compile on, the cores its lock holder times on): this GPU's
    slice of the worker's ``allowed`` cores (the ``gpu_index``-th of ``gpus`` equal slices; the whole
    set where the worker was already confined to fewer than the host's ``host_cpus``), its last
    ``timing_cores`` kept for timing. None where the slice has fewer than 4 cores."""
    cores = sorted(allowed)
    host_cpus = host_cpus if host_cpus is not None else (os.cpu_count() or len(cores))
    if len(cores) >= host_cpus and gpus > 1:
        size = len(cores) // gpus
        start = min(max(gpu_index, 0), gpus - 1) * size
        cores = cores[start:start + size]
    keep = timing_cores(len(cores))
    if not keep:
        return None
    return cores[:-keep], cores[-keep:]


def case_environment(cases_at_once: int, *, device: str, cores: int, environ,
                     plan: tuple[list[int], list[int]] | None = None) -> dict[str, str]:
    """The variables a worker running ``cases_at_once`` cases sets for its case processes; ``plan``
    (``cpu_plan``'s, on a GPU): where they run and where the lock holder times."""
    if cases_at_once <= 1:
        return {}
    found = {}
    if "TORCHINDUCTOR_COMPILE_THREADS" not in environ:
        found["TORCHINDUCTOR_COMPILE_THREADS"] = str(max(1, cores // cases_at_once))
    if device == "cpu":
        found["PTBENCH_CPU_LOCK"] = "1"
    elif plan is not None and environ.get(TIMING_CPUS_ENV) == "auto":
        found[CASE_CPUS_ENV], found[TIMING_CPUS_ENV] = format_cpus(plan[0]), format_cpus(plan[1])
    return found
