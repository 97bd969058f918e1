"""One intake on a worker: the version resolved (or the one a message names, if this worker's index
holds it), its environment found or made and probed, the commit time read from the worker's mirror
when it has one, the environments beyond ``keep`` pruned. The answer is what the dashboard stores
(``dispatch.intake_done``): a build with its environment, or a failure with its log."""
from __future__ import annotations

import time

from packaging.version import Version

from runner.commits.mirror import Mirror, MirrorError
from runner.engine.executor import probe_environment
from runner.intake.config import IntakeConfig
from runner.intake.environments import IntakeFailed, TakenIn, made, prune, take_in
from runner.intake.index import ResolveError, resolve, version_named


def _probe(python: str) -> dict:
    return probe_environment(python, timeout_s=600, catalog=True)


def _commit_time(environment: dict) -> str | None:
    mirror = Mirror.from_env()
    sha = environment["build"].get("git_sha", "")
    if mirror is None:
        return None
    try:
        return mirror.commit_facts(mirror.main_commit(sha))["time"]
    except MirrorError:
        return None


def described(config: IntakeConfig, taken: TakenIn) -> dict:
    """The environment a worker reports for ``taken``: its build's ``environment.intake`` says where
    it came from; the commit time from the mirror."""
    environment = {**taken.environment, "build": dict(taken.environment["build"])}
    facts = dict(environment["build"].get("environment") or {})
    facts["intake"] = {"version": taken.version, **{k: v for k, v in config.describe().items() if k in ("index", "installer", "inherit")}}
    environment["build"]["environment"] = facts
    if not environment["build"].get("commit_time") and (when := _commit_time(environment)):
        environment["build"]["commit_time"] = when
    return environment


def intake_run(config: IntakeConfig, *, version: str = "", protect: set[str] | frozenset = frozenset()) -> dict:
    """Take in one build. Never raises for what the index or the installer did: a failure is an
    answer (``ok`` false, ``error``, ``log``)."""
    started = time.monotonic()
    chosen: Version | None = None
    try:
        chosen = version_named(config, version) if version else resolve(config)
        taken = take_in(config, chosen, probe=_probe)
    except (ResolveError, IntakeFailed) as exc:
        return {"ok": False, "version": str(chosen or version or ""), "error": str(exc)[:4000],
                "log": getattr(exc, "log", "")[-20000:], "seconds": round(time.monotonic() - started, 2)}
    pruned = prune(config, protect=set(protect) | {taken.version})
    environment = described(config, taken)
    catalog = environment.pop("config_catalog", None) or {}
    environment.pop("override_problems", None)
    return {"ok": True, "version": taken.version, "python": taken.python, "environment": environment, "config_catalog": catalog,
            "cached": taken.cached, "seconds": round(time.monotonic() - started, 2), "log": taken.log,
            "pruned": [{"version": p.version, "python": p.python} for p in pruned]}


def taken_in_builds(config: IntakeConfig | None) -> list[tuple[str, dict, dict]]:
    """(python, environment, config catalog) of every environment this worker has taken in, as
    its report and its cases know them (probed when made: never again)."""
    found = []
    for taken in made(config) if config is not None else ():
        environment = described(config, taken)
        catalog = environment.pop("config_catalog", None) or {}
        environment.pop("override_problems", None)
        found.append((taken.python, environment, catalog))
    return found
