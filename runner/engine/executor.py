"""Parent side: run each case in a fresh subprocess of the build's interpreter and classify it.

Each case gets its own process group (``start_new_session``), a wall-clock limit after which the
whole group is killed (as it is when the runner stops or dies: ``runner.engine.lifetime``,
docs/runner-processes.md), and a fresh cache directory (``TORCHINDUCTOR_CACHE_DIR``,
``TRITON_CACHE_DIR``) that the warm-compile subprocess then reuses. The child writes its result to
a file the parent names; stdout and stderr go to a log whose tail explains crashes and timeouts.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from runner.engine import lifetime
from runner.engine.cost import case_cost
from runner.engine.failures import process_excerpt
from runner.engine.result_file import METRIC_KEYS, ResultFile
from runner.engine.warm_start import SPAWNED_AT_ENV, STARTED_BY_ENV, WarmStartUnavailable
from contract.facts import CaseEnvironment
from contract.modes import EXPORTING_MODES
from contract.spec import CaseSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
LOG_TAIL_BYTES = 8000
# On timeout the child first gets this signal, on which ``python -m runner case`` dumps every
# thread's Python stack into its log (faulthandler), so the error shows where it hung.
STACK_DUMP_SIGNAL = signal.SIGUSR1
STACK_DUMP_GRACE_S = 1.0


STOP_POLL_S = 2.0  # how often a running case asks ``should_stop`` (a cancelled run)


class EnvironmentProbeFailed(RuntimeError):
    """The build's interpreter could not describe itself (no torch, wrong path, ...)."""


class CaseStopped(Exception):
    """``should_stop`` answered true while the case ran: its process group was killed."""


def child_environment(cache_dir: Path | None = None, overrides_env: dict[str, str] | None = None) -> dict[str, str]:
    """The parent's environment, with this repository importable, a build variant's variables
    (``overrides_env``) and, for a case, its own caches (which no variant may move)."""
    env = dict(os.environ)
    env.update(overrides_env or {})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"  # a segfault prints the Python stack into the log
    if cache_dir is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir / "inductor")
        env["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
    return env


def _dump_stacks(process: subprocess.Popen) -> None:
    try:
        process.send_signal(STACK_DUMP_SIGNAL)
        process.wait(timeout=STACK_DUMP_GRACE_S)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass


@dataclass(frozen=True)
class ChildExit:
    returncode: int | None
    timed_out: bool
    wall_s: float
    log_tail: str


def wait_or_stop(process: subprocess.Popen, timeout_s: float, should_stop: Callable[[], bool] | None) -> None:
    """Wait for ``process`` up to ``timeout_s`` (raises TimeoutExpired), asking ``should_stop``
    every few seconds (raises CaseStopped)."""
    if should_stop is None:
        process.wait(timeout=timeout_s)
        return
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            process.wait(timeout=max(0.0, min(STOP_POLL_S, left)))
            return
        except subprocess.TimeoutExpired:
            if left <= STOP_POLL_S:
                raise
        if should_stop():
            raise CaseStopped()


def run_child(
    command: list[str], *, env: dict[str, str], timeout_s: float, log_path: Path, should_stop: Callable[[], bool] | None = None,
    cwd: Path | None = None, spawn=None,
) -> ChildExit:
    """Run ``command`` in a new process group; on timeout, a stop request (``should_stop``) or an
    interrupt, kill the whole group. Call it from a thread that lives until it returns: the child
    dies with the thread that started it (``lifetime``). Its working directory is ``cwd`` or the
    log's directory, never the checkout: what a case writes where it runs (``torch_compile_debug/``,
    ...) lands in its own directory (docs/artifacts.md). ``spawn``: ``lifetime.start``'s (a warm
    process's fork instead of a fresh interpreter)."""
    started = time.monotonic()
    with open(log_path, "wb") as log:
        process = lifetime.start(command, cwd=cwd or log_path.parent, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, spawn=spawn)
        timed_out = False
        try:
            wait_or_stop(process, timeout_s, should_stop)
        except subprocess.TimeoutExpired:
            timed_out = True
            _dump_stacks(process)
        finally:
            # Also kills what the child left behind (compile workers) in its group, and reaps it.
            lifetime.end(process)
    return ChildExit(process.returncode, timed_out, time.monotonic() - started, read_tail(log_path))


def read_tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(size - limit, 0))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def classify_exit(child: ChildExit, record: dict | None, timeout_s: float) -> tuple[str, dict | None]:
    """(status, error) of a child from how it ended and the record it left (possibly partial)."""
    phase = (record or {}).get("phase_reached", "start")
    inside = [name for name in ((record or {}).get("path_phases") or {}) if name != "first_call_s"]
    if inside and phase == "eager":  # a compile path's phases finished before the process ended
        phase += f", then the compile path's {', '.join(inside)}"
    if child.timed_out:
        message = f"the case exceeded its {timeout_s:g} s time limit (last finished phase: {phase}); its process group was killed"
        return "timeout", process_excerpt("Timeout", message, child.log_tail)
    if record is not None and phase == "done":
        return record["status"], record.get("error")
    if child.returncode is not None and child.returncode < 0:
        name = signal_name(child.returncode)
        message = f"killed by {name} (last finished phase: {phase})"
        return "crash", process_excerpt(name, message, child.log_tail)
    message = f"exited with code {child.returncode} without a result (last finished phase: {phase})"
    return "crash", process_excerpt("ExitWithoutResult", message, child.log_tail)


@dataclass(frozen=True)
class PhaseOutcome:
    status: str
    error: dict | None
    record: dict
    wall_s: float


class CaseExecutor:
    """Runs cases one at a time (timing needs the machine to itself)."""

    def __init__(self, *, python: str, timeout_s: float, warm: bool = True, should_stop: Callable[[], bool] | None = None,
                 compile_pairs=None, artifacts=None, warm_start=None):
        self.python = python
        # runner.engine.warm_start.WarmStarter of this interpreter: case processes forked from a warm
        # process (no imports to pay); None, or a case with a variant's environment: fresh processes.
        self.warm_start = warm_start
        self.timeout_s = timeout_s
        self.warm = warm
        self.should_stop = should_stop  # a worker's cancelled-run check; raises CaseStopped
        # runner.engine.compile_pairs.CompilePairs: after a cold phase that compiled, the build's
        # compile beside a reference's: ``compile_cpu_ratio``.
        self.compile_pairs = compile_pairs
        # runner.engine.artifacts.ArtifactKeeper: the cold phase's TORCH_TRACE log kept, bounded
        # (``result["artifact"]``); None keeps nothing.
        self.artifacts = artifacts

    def _run_phase(self, spec: CaseSpec, workdir: Path, cache_dir: Path, trace_dir: Path | None = None) -> PhaseOutcome:
        spec_path = workdir / f"{spec.phase}.spec.json"
        result_path = workdir / f"{spec.phase}.result.json"
        spec.write(spec_path)
        command = [self.python, "-m", "runner", "case", "--spec", str(spec_path), "--result", str(result_path)]
        env = child_environment(cache_dir, spec.env_overrides)
        if trace_dir is not None:  # this process only: the structured log of its compile
            env["TORCH_TRACE"] = str(trace_dir)
        cwd = workdir / "cwd"
        cwd.mkdir(exist_ok=True)
        run = functools.partial(run_child, command, timeout_s=self.timeout_s, log_path=workdir / f"{spec.phase}.log",
                                should_stop=self.should_stop, cwd=cwd)
        fallback = None
        if self.warm_start is not None and not spec.env_overrides:
            try:
                child = run(env=env, spawn=self.warm_start.spawn)
            except WarmStartUnavailable as exc:
                fallback = f"warm process unavailable: {exc}"[:500]
        elif self.warm_start is not None:  # read at torch's import: only a fresh interpreter takes them
            fallback = "a variant's environment variables"
        if self.warm_start is None or fallback is not None:
            child = run(env={**env, SPAWNED_AT_ENV: repr(time.time()), STARTED_BY_ENV: "subprocess"})
        record = ResultFile(result_path).read()
        if record is not None and fallback is not None:
            record.setdefault("environment", {}).setdefault("case_process", {})["warm_fork_skipped"] = fallback
        status, error = classify_exit(child, record, self.timeout_s)
        return PhaseOutcome(status, error, record or {}, child.wall_s)

    def run(self, spec: CaseSpec, *, workload_name: str, repro: str) -> dict:
        """The run document's result object for ``spec``; never raises for a failing case."""
        workdir = Path(tempfile.mkdtemp(prefix="ptbench-case-"))
        try:
            cache_dir = workdir / "cache"
            keep = self.artifacts is not None and self.artifacts.enabled
            cold = self._run_phase(spec.with_phase("cold"), workdir, cache_dir, workdir / "trace" if keep else None)
            result = _result_from(cold, spec, workload_name, repro)
            if keep and (artifact := self.artifacts.keep(workdir / "trace", label=_artifact_label(workload_name, spec))):
                result["artifact"] = artifact
            result["environment"]["process_wall_s"] = {"cold": round(cold.wall_s, 3)}
            duration = cold.wall_s
            pairs_s = warm_s = None
            if self.compile_pairs is not None and spec.compile_mode in EXPORTING_MODES:
                # A pair starts its count at the first call; an exporting path's work is before it.
                result["environment"]["compile_pairs_skipped"] = f"mode {spec.compile_mode} exports before its first call"
            elif self.compile_pairs is not None and cold.status in ("pass", "fail_accuracy"):
                started = time.monotonic()
                pairs = self.compile_pairs.measure(spec, self.python, timeout_s=self.timeout_s, should_stop=self.should_stop)
                pairs_s = time.monotonic() - started
                duration += pairs_s
                result["environment"]["compile_pairs"] = pairs
                result["metrics"]["compile_cpu_ratio"] = pairs["work_ratio"]
            if self.warm and cold.status in ("pass", "fail_accuracy"):
                warm = self._run_phase(spec.with_phase("warm"), workdir, cache_dir)
                duration += warm.wall_s
                warm_s = warm.wall_s
                result["environment"]["process_wall_s"]["warm"] = round(warm.wall_s, 3)
                _merge_warm(result, warm)
            result["duration_s"] = round(duration, 3)
            if cold.record:
                result["cost"] = case_cost(cold.record, compile_pairs_s=pairs_s, warm_s=warm_s)
            return result
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def _artifact_label(workload_name: str, spec: CaseSpec) -> str:
    return "-".join((workload_name, spec.compile_mode, spec.shape_regime, spec.dtype, spec.device))


def _result_from(cold: PhaseOutcome, spec: CaseSpec, workload_name: str, repro: str) -> dict:
    record = cold.record
    metrics = dict.fromkeys(METRIC_KEYS)
    metrics.update({k: v for k, v in (record.get("metrics") or {}).items() if k in metrics})
    result = {
        "workload": workload_name,
        "config": spec.config(),
        "status": cold.status,
        "metrics": metrics,
        "graph_breaks": record.get("graph_breaks") or [],
        "recompiles": record.get("recompiles") or [],
        "error": cold.error,
        "repro": repro,
        "environment": CaseEnvironment(record.get("environment") or {"backend": spec.backend, "size": spec.size}),
    }
    if record.get("samples"):
        result["samples"] = record["samples"]
    if record.get("path_phases"):
        result["path_phases"] = record["path_phases"]
    phases = {side: r for side, r in (record.get("compile_phases") or {}).items() if r}
    if phases:
        result["compile_phases"] = phases
    if record.get("kernel_profile"):
        result["kernel_profile"] = record["kernel_profile"]
    return result


def _merge_warm(result: dict, warm: PhaseOutcome) -> None:
    environment = result["environment"]
    caches = (warm.record.get("environment") or {}).get("compile_caches")
    if caches is not None:
        environment["warm_compile_caches"] = caches
    host_speed = (warm.record.get("environment") or {}).get("compile_warm")
    if host_speed is not None:
        environment["compile_warm"] = host_speed
    waited = (warm.record.get("environment") or {}).get("compile_warm_lock_wait_s")
    if waited is not None:
        environment["compile_warm_lock_wait_s"] = waited
    if warm.record.get("path_phases"):
        environment["warm_path_phases"] = warm.record["path_phases"]
    if (started := (warm.record.get("environment") or {}).get("case_process")) is not None:
        environment["warm_case_process"] = started
    warm_phases = (warm.record.get("compile_phases") or {}).get("warm")
    if warm_phases:
        result.setdefault("compile_phases", {})["warm"] = warm_phases
    if warm.status == "pass":
        result["metrics"]["compile_time_warm_s"] = warm.record["metrics"]["compile_time_warm_s"]
    else:
        error = warm.error or {}
        environment["warm_compile_error"] = f"{warm.status}: {error.get('message', '')}"[:2000]


def probe_environment(python: str, *, timeout_s: float = 300, overrides=None, catalog: bool = False) -> dict:
    """Run the build's interpreter once to describe the build and the machine.

    With ``overrides`` (``contract.variants.Overrides``) the probe runs with the variant's
    environment and checks its config keys against that torch: ``override_problems`` lists
    ``{field, message}`` for each key it lacks or value of the wrong type. With ``catalog``,
    ``config_catalog`` describes every config key of that torch (``runner.engine.overrides``)."""
    workdir = Path(tempfile.mkdtemp(prefix="ptbench-env-"))
    try:
        out_path = workdir / "environment.json"
        command = [python, "-m", "runner", "environment", "--out", str(out_path)]
        if overrides:
            config_path = workdir / "overrides.json"
            config_path.write_text(json.dumps(overrides.config))
            command += ["--check-config", str(config_path)]
        if catalog:
            command.append("--catalog")
        child = run_child(
            command,
            env=child_environment(None, overrides.env if overrides else None),
            timeout_s=timeout_s,
            log_path=workdir / "environment.log",
        )
        if child.returncode != 0 or not out_path.exists():
            raise EnvironmentProbeFailed(f"{python} could not describe its build (exit {child.returncode}):\n{child.log_tail[-2000:]}")
        return json.loads(out_path.read_text())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
