"""Compile time that a shared, drifting host does not blur: the build's cold compile beside a reference's.

On the lent GPU VMs one cold compile of an unchanged build varies 6-15 % (sd, two cases per host)
because the host's speed changes (steal, neighbours) and its cores do not run alike: the same
single-threaded compile, started at the same moment in two processes, took up to 30 % more CPU time
on one core than on another. Instruction counts would not care, but these VMs expose no PMU.

So every pair is two fresh processes with fresh inductor and triton caches (``compile_once``): the
build (its interpreter, with a variant's overrides) and the machine class's pinned reference
interpreter (no overrides), each built up to its first compiled call with its compile-worker pool
already started; then both main threads are put on one core (the lowest of the pair's CPUs) and
told to go at once. They time-share that core, so whatever speed it has, both get it; their workers
share the other CPUs. ``compile_cpu_ratio`` (``work_ratio`` here) is the geometric mean of the
pairs' CPU-time ratios (build / reference; the process, its threads and compile workers, from the
go line to the end of the first call): 1.0 = as much compile work as the reference, 1.2 = a fifth
more. On the lent H100 with two cases per host one pair's ratio varied 0.7-1.4 % (sd) per workload
and the mean of 3 pairs 0.2-0.8 % run to run (against 8-13 % for the compile's wall time, and 4-9 %
per pair with the two sides on cores of their own; bench/results/compile-noise/). The wall-time
ratio (``wall_ratio``) is kept beside it; with both sides on one core it understates a slower
build (the reference's share of the core frees when it ends), so ``compile_time_cold_s`` stays the
wall-time measure (it catches a compile waiting on the GPU, e.g. ``coordinate_descent_tuning``).
A pair in which either side fails is dropped and its error recorded.

Two runners on one host should run on disjoint CPUs (``taskset``, or ``CompilePairs.cpus``): each
puts its pairs' main threads on the lowest CPU it may use.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from contract.spec import CaseSpec
from runner.engine import lifetime
from runner.engine.compile_once import PREWARM_ENV, READY
from runner.engine.executor import (
    STOP_POLL_S,
    CaseStopped,
    EnvironmentProbeFailed,
    child_environment,
    probe_environment,
    read_tail,
    wait_or_stop,
)

# Pairs per case unless asked otherwise: one pair's CPU ratio varies 0.7-1.4 % (sd) per workload on
# the lent H100 with two cases per host, the mean of 3 0.2-0.8 % (bench/results/compile-noise/).
DEFAULT_PAIRS = 3
# How the pairs are measured, recorded with them (``environment.compile_pairs.method``): 1 (before
# 2026-11-24 night) counted the build of instance B too and let each side run on its own cores; 2
# counts only the compile, the pool started before it, both main threads on one core.
METHOD = 2


@dataclasses.dataclass(frozen=True)
class CompileReference:
    """The pinned interpreter a machine class compiles beside every case, and what it is."""

    python: str
    torch: str | None = None
    git_sha: str | None = None

    def describe(self) -> dict:
        return {"python": self.python, "torch": self.torch, "git_sha": self.git_sha}


def primary_threads(*, allowed: set[int] | None = None, cpus: str = "/sys/devices/system/cpu") -> set[int] | None:
    """One hardware thread of each core this process may run on (the lowest of its siblings), or
    None where the topology is unknown or every core has one thread. Two threads of one core share
    its execution units and caches: a compile whose workers land on busy siblings does the same work
    in more CPU time. ``allowed`` (default: this process's affinity) and ``cpus`` (sysfs) for tests."""
    allowed = os.sched_getaffinity(0) if allowed is None else allowed
    primary = set()
    for cpu in allowed:
        try:
            siblings = Path(f"{cpus}/cpu{cpu}/topology/thread_siblings_list").read_text()
        except OSError:
            return None
        members = set()
        for part in siblings.strip().split(","):
            low, _, high = part.partition("-")
            members.update(range(int(low), int(high or low) + 1))
        primary.add(min(members & allowed or {cpu}))
    return primary if primary != allowed else None


def probe_reference(python: str, *, device: str | None = None) -> CompileReference:
    """The reference at ``python``, described by its own interpreter; raises
    ``EnvironmentProbeFailed`` when it cannot describe itself or (``device="cuda"``) sees no GPU."""
    environment = probe_environment(python)
    if device == "cuda" and not environment["cuda_available"]:
        raise EnvironmentProbeFailed(f"{python} sees no CUDA GPU")
    build = environment["build"]
    return CompileReference(python=python, torch=build.get("torch_version"), git_sha=build.get("git_sha"))


def geometric_mean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values and all(v > 0 for v in values) else None


class _Side:
    """One compile-once process: started, waiting for the go line, then compiling."""

    def __init__(self, name: str, python: str, spec: CaseSpec, workdir: Path, cpus: set[int] | None = None,
                 env: dict[str, str] | None = None):
        self.name, self.workdir = name, workdir
        self.result_path = workdir / f"{name}.result.json"
        spec_path = workdir / f"{name}.spec.json"
        spec.write(spec_path)
        self.log_path = workdir / f"{name}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (held open for the process; closed in close())
        self.ended = False  # its stdout closed before READY: it exited
        self.process = lifetime.start(
            [python, "-m", "runner", "compile-once", "--spec", str(spec_path), "--result", str(self.result_path)],
            cwd=workdir, env=child_environment(workdir / f"{name}-cache", spec.env_overrides) | (env or {}),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        if cpus:  # before it starts any thread or compile worker: they inherit it
            try:
                os.sched_setaffinity(self.process.pid, cpus)
            except BaseException:
                self.close()
                raise

    def wait_ready(self, deadline: float, should_stop: Callable[[], bool] | None) -> bool:
        """Read stdout until the READY line (True), the end of the process or ``deadline`` (False);
        whatever else the process prints goes to its log."""
        pending = b""
        stream = self.process.stdout.fileno()
        while time.monotonic() < deadline:
            readable, _, _ = select.select([stream], [], [], min(STOP_POLL_S, max(0.0, deadline - time.monotonic())))
            if not readable:
                if should_stop is not None and should_stop():
                    raise CaseStopped()
                continue
            chunk = os.read(stream, 65536)
            if not chunk:
                self.ended = True
                return False
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip() == READY.encode():
                    return True
                self._log.write(line + b"\n")
        return False

    def go(self) -> None:
        self.process.stdin.write(b"go\n")
        self.process.stdin.close()

    def result(self) -> dict | None:
        try:
            return json.loads(self.result_path.read_text())
        except (OSError, ValueError):
            return None

    def error(self) -> str:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._log.flush()
        return f"{self.name} compile exited {self.process.returncode}: {read_tail(self.log_path, 1500).strip()[-1500:]}"

    def close(self) -> None:
        lifetime.end(self.process)  # its group killed (and so its compile workers), reaped, forgotten
        self._log.close()


def _wait_all(sides: list[_Side], timeout_s: float, should_stop: Callable[[], bool] | None) -> bool:
    """Wait for every side to exit; False when ``timeout_s`` ran out."""
    deadline = time.monotonic() + timeout_s
    try:
        for side in sides:
            wait_or_stop(side.process, max(0.0, deadline - time.monotonic()), should_stop)
    except subprocess.TimeoutExpired:
        return False
    return True


def one_pair(spec: CaseSpec, build_python: str, reference: CompileReference, *, timeout_s: float,
             should_stop: Callable[[], bool] | None = None, cpus: set[int] | None = None,
             env: dict[str, str] | None = None, shared_core: int | None = None) -> dict:
    """{build_wall_s, build_cpu_s, build_own_cpu_s, build_main_cpus, reference_wall_s, ...} or
    {error}. ``env``: how both sides compile (the measurement's settings, not a build variant's);
    ``shared_core``: the core both main threads run on once ready (affinity of the thread whose id
    is the process's; the workers keep theirs)."""
    workdir = Path(tempfile.mkdtemp(prefix="ptbench-pair-"))
    plain = dataclasses.replace(spec, config_overrides={}, env_overrides={}, phase="cold")
    sides = []
    try:
        sides.append(_Side("build", build_python, dataclasses.replace(spec, phase="cold"), workdir, cpus, env))
        sides.append(_Side("reference", reference.python, plain, workdir, cpus, env))
        deadline = time.monotonic() + timeout_s
        unready = [side for side in sides if not side.wait_ready(deadline, should_stop)]
        if unready:
            return {"error": "; ".join(side.error() if side.ended
                                       else f"{side.name} compile not ready within {timeout_s:g} s" for side in unready)[:2000]}
        if shared_core is not None:  # both main threads time-share one core: its speed is the same for both
            for side in sides:
                os.sched_setaffinity(side.process.pid, {shared_core})
        for side in sides:
            side.go()
        if not _wait_all(sides, timeout_s, should_stop):
            return {"error": f"the pair exceeded its {timeout_s:g} s time limit"}
        results = {side.name: side.result() for side in sides}
        failed = [side for side in sides if results[side.name] is None]
        if failed:
            return {"error": "; ".join(side.error() for side in failed)[:2000]}
        return {f"{name}_{key}": results[name][key] for name in ("build", "reference")
                for key in ("wall_s", "cpu_s", "own_cpu_s", "main_cpus") if key in results[name]} | {
            "cpu_source": results["build"]["cpu_source"]}
    finally:
        for side in sides:
            side.close()
        shutil.rmtree(workdir, ignore_errors=True)


def summarize(pairs: list[dict], reference: CompileReference, settings: dict | None = None) -> dict:
    """The ``environment.compile_pairs`` record and the metric from the pairs measured."""
    good = [p for p in pairs if "error" not in p]
    work = geometric_mean([p["build_cpu_s"] / p["reference_cpu_s"] for p in good if p["reference_cpu_s"] > 0])  # beside it
    wall = geometric_mean([p["build_wall_s"] / p["reference_wall_s"] for p in good if p["reference_wall_s"] > 0])
    record = {
        "reference": reference.describe(),
        "pairs": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in p.items()} for p in pairs],
        "work_ratio": None if work is None else round(work, 5),
        "wall_ratio": None if wall is None else round(wall, 5),
        "method": METHOD,
    }
    if settings:
        record["settings"] = settings
    return record


def pair_time_bound_s(pairs: int, timeout_s: float) -> float:
    """``pairs`` pairs in turn, each up to 2 x ``timeout_s`` (ready, then done: ``one_pair``)."""
    return pairs * 2 * timeout_s


@dataclasses.dataclass(frozen=True)
class CompilePairs:
    """What a run asks for: ``pairs`` compile pairs of every case that compiled, beside ``reference``
    (``CaseExecutor`` calls ``measure`` after the cold phase)."""

    reference: CompileReference
    pairs: int
    one_thread_per_core: bool = False
    cpus: frozenset[int] | None = None  # run every pair on these CPUs only (e.g. a worker's share of the host)
    prewarm: bool = True  # the compile-worker pool started before the go line (its start is not counted)
    shared_core: bool = True  # both main threads on one core once ready (only with ``prewarm``: workers would inherit it)

    def time_bound_s(self, timeout_s: float) -> float:
        """The longest the pairs of one case may take: each ``one_pair`` waits up to ``timeout_s``
        for both sides to be ready, then up to ``timeout_s`` for both to finish."""
        return pair_time_bound_s(self.pairs, timeout_s)

    def measure(self, spec: CaseSpec, build_python: str, *, timeout_s: float,
                should_stop: Callable[[], bool] | None = None) -> dict:
        """The pairs in turn; the ``summarize`` record."""
        cpus = set(self.cpus) if self.cpus else None
        if self.one_thread_per_core and (primary := primary_threads()):
            cpus = (cpus & primary or cpus) if cpus else primary
        env = {} if self.prewarm else {PREWARM_ENV: "0"}
        core = min(cpus or os.sched_getaffinity(0)) if self.shared_core and self.prewarm else None
        settings = {"prewarm": self.prewarm, "shared_core": core}
        if cpus:
            settings["cpus"] = len(cpus)
        return summarize([one_pair(spec, build_python, self.reference, timeout_s=timeout_s, should_stop=should_stop,
                                   cpus=cpus, env=env, shared_core=core) for _ in range(self.pairs)], self.reference, settings)
