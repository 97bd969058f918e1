"""A runner worker's settings, from environment variables (no Django, no database).

    PTBENCH_BROKER_URL        the dashboard's Redis (falls back to CELERY_BROKER_URL)
    PTBENCH_MACHINE_CLASS     this machine's class and queue, e.g. gpu-h100 or cpu (required)
    PTBENCH_BUILDS            the builds this worker has: comma-separated interpreter paths, each
                              optionally "LABEL=PATH" to give a patched build its local label;
                              default: the worker's own interpreter. A build variant (issue #16)
                              is an entry followed by ";config=SECTION.KEY=VALUE" and/or
                              ";env=NAME=VALUE" parts (repeatable, no ',' or ';' in values), e.g.
                              "/opt/t/bin/python,/opt/t/bin/python;config=inductor.max_autotune=true"
                              (the base build and one variant; the variant's label is derived)
    PTBENCH_BUILDS_ROOT       directories (comma-separated, absolute) under which an interpreter the
                              dashboard names (the admin's Build environments) may be probed and run;
                              any other path is refused here (contract.interpreters; default: none)
    PTBENCH_ALLOW_SETTINGS    settings this machine class admits beyond data (issue #33; none by default):
                              config keys or environment names, comma- or space-separated, each alone
                              (any value) or NAME=VALUE (that value only), e.g.
                              "TRITON_PTXAS_PATH=/opt/cuda-12.8/bin/ptxas". Every case message is checked
                              against it (runner.worker.screening), and so are PTBENCH_BUILDS' variants;
                              the dashboard never admits more than data (docs/variants-and-settings.md)
    PTBENCH_COMPILE_REFERENCE this machine class's pinned reference interpreter: every case that
                              compiled is compiled again beside it (runner.engine.compile_pairs),
                              for a compile_cpu_ratio that the host's speed does not blur (default: none)
    PTBENCH_COMPILE_PAIRS     compile pairs per case with a reference (default 3); each case's time
                              limits grow by 2 x its timeout per pair on this worker (runner.worker.limits)
    PTBENCH_DASHBOARD_URL     the dashboard's address: each case's compile trace (TORCH_TRACE, gzip)
                              is uploaded there (PUT /api/v1/artifacts/<sha256>/, docs/artifacts.md),
                              never sent through the broker; unset: no trace is kept
    PTBENCH_API_TOKEN         a write token of that dashboard, for the upload
    PTBENCH_ARTIFACT_MAX_BYTES the bound on each kept trace, compressed (default 4 MiB; 0 keeps none)
    PTBENCH_MAX_RETRIES       retries of a case after an infrastructure error (default 3)
    PTBENCH_RETRY_DELAY_S     first retry delay; doubles each time (default 30)
    PTBENCH_HANDOVER_S        seconds after this worker's last renewal that a case it held is handed to
                              another worker: it died (default 600). Every restore interval it renews
                              the records of every message it holds, running or waiting (for a slot,
                              a retry's countdown), so none is handed out while it lives; 0: only
                              after PTBENCH_VISIBILITY_TIMEOUT (contract/broker_transport.py, 5.)
    PTBENCH_VISIBILITY_TIMEOUT the hand-over of a case held by a worker that does not renew (a release
                              before PTBENCH_HANDOVER_S) and the ceiling of PTBENCH_HANDOVER_S
                              (default 7200; the same on the dashboard and every worker)
    PTBENCH_RESTORE_INTERVAL_S how often this worker renews what it holds and hands over what lost
                              workers held (default 10; at most a third of PTBENCH_HANDOVER_S)
    PTBENCH_CASES_AT_ONCE     cases this worker runs at once on its device, each timing alone under the
                              device's lock (default: from the GPU's share of cores and its memory, at
                              most 4; 1 on the CPU: runner.worker.slots). The worker's concurrency,
                              unless --concurrency says otherwise
    PTBENCH_WARM_START        own (default): cases of the build whose interpreter is the worker's own are
                              forked from a warm process that has imported torch and the model
                              libraries (runner.engine.warm_start); all: a warm process for every
                              configured build; off: every case in a fresh interpreter
"""
from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field

from contract.interpreters import builds_roots, roots_problem
from contract.settings_policy import DATA_ONLY, Allowance
from runner.engine.lifetime import device_slot
from runner.worker import slots
from runner.engine.artifacts import DEFAULT_MAX_BYTES, max_bytes_from_environ
from contract.variants import InvalidOverride, Overrides
from contract.vocabulary import MACHINE_CLASS


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


@dataclass(frozen=True)
class BuildEntry:
    python: str
    local_label: str | None  # None: the label the build reports itself ("+cu130" -> "cu130")
    overrides: Overrides = field(default_factory=Overrides)  # a variant's; its label derives from local_label


@dataclass(frozen=True)
class WorkerConfig:
    broker_url: str
    machine_class: str
    builds: tuple[BuildEntry, ...]
    hostname: str
    max_retries: int
    retry_delay_s: float
    visibility_timeout_s: int
    restore_interval_s: float
    handover_s: int = 600  # PTBENCH_HANDOVER_S
    compile_reference: str = ""
    compile_pairs: int = 3  # runner.engine.compile_pairs.DEFAULT_PAIRS
    allow: Allowance = DATA_ONLY  # PTBENCH_ALLOW_SETTINGS
    dashboard_url: str = ""  # PTBENCH_DASHBOARD_URL: where artifacts are uploaded
    api_token: str = ""  # PTBENCH_API_TOKEN
    artifact_max_bytes: int = DEFAULT_MAX_BYTES  # PTBENCH_ARTIFACT_MAX_BYTES
    cases_at_once: int = 1  # PTBENCH_CASES_AT_ONCE
    case_environment: dict = field(default_factory=dict)  # what several cases at once set (runner.worker.slots)
    warm_start: str = "own"  # PTBENCH_WARM_START: own, all, off
    builds_roots: tuple[str, ...] = ()  # PTBENCH_BUILDS_ROOT: where interpreters the dashboard names may live

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> WorkerConfig:
        env = os.environ if environ is None else environ
        broker = env.get("PTBENCH_BROKER_URL") or env.get("CELERY_BROKER_URL") or ""
        machine_class = env.get("PTBENCH_MACHINE_CLASS", "")
        if machine_class and not MACHINE_CLASS.fullmatch(machine_class):
            raise ConfigError(f"PTBENCH_MACHINE_CLASS={machine_class!r}: lower-case letters, digits, '-' and '_', e.g. gpu-h100")
        try:
            allow = Allowance.from_environ(env)
            artifact_max_bytes = max_bytes_from_environ(env)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return cls(
            broker_url=broker,
            machine_class=machine_class,
            builds=parse_builds(env.get("PTBENCH_BUILDS", ""), allow=allow),
            hostname=env.get("PTBENCH_HOSTNAME") or socket.gethostname() or "unknown",
            max_retries=_int(env, "PTBENCH_MAX_RETRIES", 3),
            retry_delay_s=float(_int(env, "PTBENCH_RETRY_DELAY_S", 30)),
            visibility_timeout_s=_int(env, "PTBENCH_VISIBILITY_TIMEOUT", 7200),
            **_handover(env),
            compile_reference=env.get("PTBENCH_COMPILE_REFERENCE", ""),
            compile_pairs=_pairs(env),
            allow=allow,
            dashboard_url=env.get("PTBENCH_DASHBOARD_URL", ""),
            api_token=env.get("PTBENCH_API_TOKEN", ""),
            artifact_max_bytes=artifact_max_bytes,
            **_cases_at_once(env),
            warm_start=_choice(env, "PTBENCH_WARM_START", ("own", "all", "off")),
            builds_roots=builds_roots(env),
        )

    def require(self) -> None:
        """What a worker cannot start without."""
        if not self.broker_url:
            raise ConfigError("PTBENCH_BROKER_URL is not set (the dashboard's Redis, e.g. redis://dashboard:6379/0)")
        if not self.machine_class:
            raise ConfigError("PTBENCH_MACHINE_CLASS is not set (this machine's class and queue, e.g. gpu-h100)")
        if problem := roots_problem(self.builds_roots):
            raise ConfigError(problem)


def _int(env, name: str, default: int) -> int:
    text = env.get(name)
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r}: not an integer") from None
    if value < 0:
        raise ConfigError(f"{name}={text!r}: must not be negative")
    return value


def _handover(env) -> dict:
    """A live worker renews what it holds every restore interval: a hand-over shorter than three
    of them could hand a running case out on one late renewal."""
    interval = _int(env, "PTBENCH_RESTORE_INTERVAL_S", 10) or 10  # 0: kombu's default, 10 s
    handover = _int(env, "PTBENCH_HANDOVER_S", 600)
    if handover and handover < 3 * interval:
        raise ConfigError(f"PTBENCH_HANDOVER_S={handover}: at least 3 x PTBENCH_RESTORE_INTERVAL_S ({3 * interval}), or 0")
    return {"handover_s": handover, "restore_interval_s": float(interval)}


def _cases_at_once(env) -> dict:
    device = "cpu" if device_slot(env) == "cpu" else "cuda"
    gpus = slots.gpus_here(env) if device == "cuda" else None
    share = slots.host_cores() // max(gpus[0] if gpus else 1, 1)  # this GPU's share of the host's cores
    count = _int(env, "PTBENCH_CASES_AT_ONCE", 0) or slots.default_cases_at_once(device=device, cores=slots.host_cores(), gpus=gpus)
    if count > 64:
        raise ConfigError(f"PTBENCH_CASES_AT_ONCE={count}: from 1 to 64")
    plan = slots.cpu_plan(slots.allowed_cpus(), gpus=gpus.count, gpu_index=gpus.index) if gpus else None
    return {"cases_at_once": count,
            "case_environment": slots.case_environment(count, device=device, cores=share, environ=env, plan=plan)}



def _choice(env, name: str, choices: tuple[str, ...]) -> str:
    value = env.get(name) or choices[0]
    if value not in choices:
        raise ConfigError(f"{name}={value!r}: one of {', '.join(choices)}")
    return value


def _pairs(env) -> int:
    pairs = _int(env, "PTBENCH_COMPILE_PAIRS", 3)
    if not 1 <= pairs <= 20:
        raise ConfigError(f"PTBENCH_COMPILE_PAIRS={pairs}: from 1 to 20")
    return pairs


def parse_builds(text: str, *, allow: Allowance = DATA_ONLY) -> tuple[BuildEntry, ...]:
    entries = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        head, *parts = (p.strip() for p in item.split(";"))
        label, _, path = head.rpartition("=")
        entries.append(BuildEntry(python=path, local_label=label or None, overrides=_overrides(item, parts, allow)))
    return tuple(entries) or (BuildEntry(python=sys.executable, local_label=None),)


def _overrides(item: str, parts: list[str], allow: Allowance) -> Overrides:
    """``config=SECTION.KEY=VALUE`` / ``env=NAME=VALUE`` parts of a PTBENCH_BUILDS entry."""
    found: dict[str, list[str]] = {"config": [], "env": []}
    for part in parts:
        kind, _, assignment = part.partition("=")
        if kind not in found or not assignment:
            raise ConfigError(f"PTBENCH_BUILDS entry {item!r}: {part!r} is not config=SECTION.KEY=VALUE or env=NAME=VALUE")
        found[kind].append(assignment)
    try:
        return Overrides.from_cli(found["config"], found["env"], allow=allow)
    except InvalidOverride as exc:
        raise ConfigError(f"PTBENCH_BUILDS entry {item!r}: {exc}") from None
