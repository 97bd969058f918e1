"""One case at a time on a GPU while it times: an exclusive file lock per GPU (docs/families.md, "GPU runs").

Several runner processes (streams) share one GPU so that one compiles while another times; a case
holds this lock from its warm-up through its memory measurement, and again around its profiled
call and a float64 accuracy run, never while it compiles. The lock is ``fcntl.flock`` on
``<PTBENCH_GPU_LOCK_DIR or the temp dir>/ptbench-gpu-<GPU UUID>.lock``: every process that names the
same GPU, whatever its ``CUDA_VISIBLE_DEVICES``, takes the same file; the kernel drops the lock when
a process dies. On CPU nothing is locked, unless the worker runs several cases at once there
(``CPU_LOCK_ENV``: the same lock on ``ptbench-gpu-cpu.lock``). The case's environment says how long
it waited (``gpu_lock_wait_s``) and what it held (``gpu_lock``: steps, seconds, and each hold's
wall-clock interval, so that a run can show that no two cases of one device timed at once).

Autotuning is GPU work that times kernels: a case whose first compiled call autotunes (inductor's
Triton configs, max-autotune's GEMM choices, coordinate descent) would disturb another case's timing,
and be disturbed by it. ``DeviceLock.autotuning`` registers the lock with inductor's benchmarker
(``torch._inductor.runtime.benchmarking.set_gpu_benchmark_lock_context``, torch 2.13): each benchmark
burst holds it, so the rest of the compile still overlaps. A torch without that hook (2.11) gets the
same from the benchmarker classes' GPU methods wrapped for the block (``_benchmarkers_locked``); only
where neither exists does the whole first compiled call hold it (``first_call_hold``).

Timing cores (opt-in, ``PTBENCH_TIMING_CPUS=auto`` on the worker): where the worker runs several
cases on a GPU it names the cores they run on
(``PTBENCH_CASE_CPUS``: ``confine_case`` keeps the case process, and so its compile workers, there)
and the cores kept for timing (``PTBENCH_TIMING_CPUS``): a hold moves the holding thread onto those
for the block and back after it (not the whole first compiled call, whose compile workers would
follow it there), so that whoever times has cores no compile runs on.
docs/runner-processes.md, section 6.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

LOCK_DIR_ENV = "PTBENCH_GPU_LOCK_DIR"
CPU_LOCK_ENV = "PTBENCH_CPU_LOCK"  # "1": CPU cases lock too (a worker running several cases at once on the CPU)
CASE_CPUS_ENV = "PTBENCH_CASE_CPUS"  # "0,1,2": the cores a case runs and compiles on (runner.worker.slots.cpu_plan)
TIMING_CPUS_ENV = "PTBENCH_TIMING_CPUS"  # "14,15": the cores the lock holder's thread times on ("auto" on the worker)
MAX_INTERVALS = 200  # hold intervals kept per case (autotuning may hold it thousands of times)


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


def format_cpus(cpus) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def parse_cpus(text: str | None) -> set[int]:
    """``"0,1,5"`` -> {0, 1, 5}; empty, "auto" or malformed -> empty."""
    try:
        return {int(part) for part in (text or "").split(",") if part.strip()}
    except ValueError:
        return set()


def confine_case(environ=os.environ) -> list[int] | None:
    """First thing in a case process: run on ``PTBENCH_CASE_CPUS`` (threads and compile workers started
    later inherit it). The cores it runs on, or None where nothing was named or Linux refused."""
    cpus = parse_cpus(environ.get(CASE_CPUS_ENV))
    if not cpus:
        return None
    try:
        os.sched_setaffinity(0, cpus)
    except (AttributeError, OSError):
        return None
    return sorted(cpus)


@contextlib.contextmanager
def on_cpus(cpus: set[int]) -> Iterator[bool]:
    """The calling thread on ``cpus`` for the block (Linux: affinity is per thread), then back where it
    was; yields whether it moved (False with no cores named or where Linux refused)."""
    try:
        before = os.sched_getaffinity(0) if cpus else None
        if before is not None:
            os.sched_setaffinity(0, cpus)
    except (AttributeError, OSError):
        before = None
    try:
        yield before is not None
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)


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
    Without a path (CPU) every hold is a no-op and the environment is empty. Holds nest: a hold inside
    a hold of the same lock (an autotuning benchmark while the case already holds it) is the outer one."""

    def __init__(self, path: Path | None):
        self.path = path
        self.wait_s = 0.0
        self.held_s = 0.0
        self.steps: list[str] = []
        self.intervals: list[list] = []  # [step, from, to]: wall-clock seconds (time.time()) of each hold
        self.autotune = {"holds": 0, "held_s": 0.0, "wait_s": 0.0}
        self.autotune_lock = ""  # how autotuning is kept out of other cases' timing: "benchmarker", "first call"
        self.timing_cpus = parse_cpus(os.environ.get(TIMING_CPUS_ENV)) if path is not None else set()
        self.moved = 0  # holds whose thread ran on the timing cores
        self._depth = 0

    @classmethod
    def for_device(cls, device: str) -> DeviceLock:
        if device == "cuda":
            return cls(lock_path(cuda_key()))
        return cls(lock_path("cpu") if os.environ.get(CPU_LOCK_ENV) == "1" else None)

    @contextlib.contextmanager
    def hold(self, step: str) -> Iterator[None]:
        if self.path is None or self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        cores = self.timing_cpus if step != "first call" else set()  # the first call's compile workers would inherit them
        with exclusive(self.path) as waited, on_cpus(cores) as moved:
            self.moved += moved
            self._depth += 1
            self.wait_s += waited
            started, wall = time.monotonic(), time.time()
            try:
                yield
            finally:
                self._depth -= 1
                held = time.monotonic() - started
                self.held_s += held
                if step == "autotune":
                    self.autotune["holds"] += 1
                    self.autotune["held_s"] += held
                    self.autotune["wait_s"] += waited
                else:
                    self.steps.append(step)
                if len(self.intervals) < MAX_INTERVALS:
                    self.intervals.append([step, round(wall, 6), round(wall + held, 6)])

    @contextlib.contextmanager
    def autotuning(self) -> Iterator[None]:
        """In the block, inductor's benchmarking holds this lock (each burst), where torch has the hook
        and something is locked; elsewhere the first compiled call holds it (``first_call_hold``)."""
        if self.path is None:
            yield
            return
        try:
            import torch._inductor.runtime.benchmarking as benchmarking  # noqa: PLC0415
        except ImportError:
            yield
            return
        hook = getattr(benchmarking, "set_gpu_benchmark_lock_context", None)
        if hook is not None:
            previous = hook(lambda: self.hold("autotune"))
            self.autotune_lock = "benchmarker"
            try:
                yield
            finally:
                hook(previous)
            return
        with _benchmarkers_locked(benchmarking, lambda: self.hold("autotune")) as patched:
            if patched:
                self.autotune_lock = "benchmarker (patched)"
            yield

    @contextlib.contextmanager
    def waits(self) -> Iterator[list[float]]:
        """``with lock.waits() as waited:`` then ``waited[0]``: the seconds the block stood waiting
        for the lock (a first compiled call's autotuning while another case timed), which its
        compile time leaves out (docs/runner-processes.md, section 6)."""
        waited, before = [0.0], self.wait_s
        try:
            yield waited
        finally:
            waited[0] = max(0.0, self.wait_s - before)

    def first_call_hold(self) -> contextlib.AbstractContextManager:
        """What the first compiled call runs under: nothing when the benchmarker holds the lock
        (``autotuning``) or nothing is locked, else the lock itself (compile included)."""
        if self.path is None or (self.autotune_lock or "").startswith("benchmarker"):
            return contextlib.nullcontext()
        self.autotune_lock = "first call"
        return self.hold("first call")

    def environment(self) -> dict:
        if self.path is None:
            return {}
        held = {"file": str(self.path), "held_s": round(self.held_s, 3), "steps": list(self.steps),
                "intervals": [list(i) for i in self.intervals]}
        if self.autotune_lock:
            held["autotune_lock"] = self.autotune_lock
        if self.timing_cpus:
            held["timing_cpus"] = {"cpus": sorted(self.timing_cpus), "holds_moved": self.moved}
        if self.autotune["holds"]:
            held["autotune"] = {k: round(v, 3) for k, v in self.autotune.items()}
        return {"gpu_lock_wait_s": round(self.wait_s, 3), "gpu_lock": held}


# The benchmarker methods through which inductor times kernels while it compiles (torch 2.11-2.13).
BENCHMARK_METHODS = ("benchmark_gpu", "benchmark_gpu_with_cuda_graph")


@contextlib.contextmanager
def _benchmarkers_locked(module, context) -> Iterator[bool]:
    """On a torch without ``set_gpu_benchmark_lock_context`` (2.11, the GPU image's): the benchmarker
    classes of ``module`` get their GPU benchmark methods wrapped in ``context`` for the block (what
    2.13's ``gpu_benchmark_lock`` decorator does), so that a compile still overlaps other cases'
    timing and only its benchmark bursts wait. Yields whether any method was wrapped; restores them."""
    originals = []
    for cls in vars(module).values():
        if not (isinstance(cls, type) and cls.__module__ == module.__name__):
            continue
        for name in BENCHMARK_METHODS:
            method = cls.__dict__.get(name)
            if callable(method):
                originals.append((cls, name, method))
                setattr(cls, name, _held(method, context))
    try:
        yield bool(originals)
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def _held(method, context):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with context():
            return method(*args, **kwargs)
    return wrapper
