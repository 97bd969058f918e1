"""A taken-in build's environment: made in a temporary directory and renamed into place once its
packages are installed and its interpreter has described itself (a half-made environment is never
found), one per version (the same version twice is one environment), the newest ``keep`` kept.

``uv`` (``uv venv`` + ``uv pip install`` from its cache, hard-linked: seconds for a version already
in the cache) where installed, else ``venv`` + ``pip``. The packages: ``torch==VERSION`` and the
companions, the resolver picking their versions to fit it (torchvision pins the torch it was built
for; triton is torch's own dependency); with ``inherit`` only those, without dependencies, the rest
seen from the base interpreter's site-packages."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from runner.intake.config import IntakeConfig, uv_path

MARKER = "intake.json"
INSTALL_TIMEOUT_S = 3600
_SITES = ("import json, sys; print(json.dumps({'version': '%d.%d' % sys.version_info[:2], "
          "'sites': [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]}))")


class IntakeFailed(RuntimeError):
    """An environment that could not be made; ``log`` holds what the installer said."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class TakenIn:
    version: str
    path: str
    python: str
    environment: dict  # ``python -m runner environment`` of it (its python the final path)
    seconds: float  # to take it in now (0 when found made)
    cached: bool  # found made before
    log: str = ""


def env_name(version: Version) -> str:
    return "torch-" + re.sub(r"[^A-Za-z0-9._-]", "-", str(version))


def envs_dir(config: IntakeConfig) -> Path:
    return config.dir / "envs"


def _run(command: list[str], log: list[str], *, env: dict | None = None, timeout: float = INSTALL_TIMEOUT_S) -> None:
    log.append("$ " + " ".join(command))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise IntakeFailed(f"{Path(command[0]).name} did not finish within {timeout:.0f} s", "\n".join(log)) from None
    except OSError as exc:
        raise IntakeFailed(f"{command[0]}: {exc}", "\n".join(log)) from None
    log.append((done.stdout + done.stderr).strip()[-20000:])
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
        tail = next((line for line in lines if line.lower().startswith("error")), lines[-1] if lines else "")
        raise IntakeFailed(f"{Path(command[0]).name} {command[1]} exited {done.returncode}: {tail[:500]}", "\n".join(log))


def install_command(config: IntakeConfig, python: str, version: Version) -> list[str]:
    """The command that installs torch ``version`` and the companions into ``python``'s environment."""
    source = ["--index-url", config.index] if config.index_is_url else ["--no-index", "--find-links", config.index]
    packages = [f"torch=={version}", *config.companions]
    flags = ["--no-deps"] if config.inherit else []
    if config.installer == "uv":
        pre = ["--prerelease", "allow"] if version.is_prerelease else []
        return [uv_path(), "pip", "install", "--python", python, "--cache-dir", str(config.cache_dir), "--link-mode", "hardlink",
                *source, *pre, *flags, *packages]
    pre = ["--pre"] if version.is_prerelease else []
    return [python, "-m", "pip", "install", "--disable-pip-version-check", "--cache-dir", str(config.cache_dir),
            *source, *pre, *flags, *packages]


def _make_venv(config: IntakeConfig, where: Path, log: list[str]) -> str:
    if config.installer == "uv":
        _run([uv_path(), "venv", "--quiet", "--python", config.python, str(where)], log, timeout=300)
    else:
        _run([config.python, "-m", "venv", str(where)], log, timeout=300)
    python = str(where / "bin" / "python")
    if config.inherit:  # after its own site-packages (torch first): the base interpreter's, .pth files included
        done = subprocess.run([config.python, "-c", _SITES], capture_output=True, text=True, timeout=60)
        layout = json.loads(done.stdout)
        site = where / "lib" / f"python{layout['version']}" / "site-packages"
        (site / "_ptbench_intake_base.pth").write_text("".join(f"import site; site.addsitedir({s!r})\n" for s in layout["sites"]))
    return python


def find_made(config: IntakeConfig, version: Version) -> TakenIn | None:
    target = envs_dir(config) / env_name(version)
    try:
        facts = json.loads((target / MARKER).read_text())
    except (OSError, ValueError):
        return None
    os.utime(target / MARKER)  # wanted again: the newest
    return TakenIn(version=str(version), path=str(target), python=facts["python"], environment=facts["environment"],
                   seconds=0.0, cached=True)


def take_in(config: IntakeConfig, version: Version, *, probe: Callable[[str], dict]) -> TakenIn:
    """The environment of torch ``version``: found made, else made now (``probe`` describes its
    interpreter before it is renamed into place). Raises ``IntakeFailed`` (nothing left behind)."""
    if (found := find_made(config, version)) is not None:
        return found
    started = time.monotonic()
    root = envs_dir(config)
    root.mkdir(parents=True, exist_ok=True)
    config.cache_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=root, prefix=".making-"))
    target = root / env_name(version)
    log: list[str] = []
    try:
        python = _make_venv(config, scratch / "env", log)
        _run(install_command(config, python, version), log)
        try:
            environment = probe(python)
        except Exception as exc:  # noqa: BLE001 (any reason it cannot describe itself fails the intake)
            raise IntakeFailed(f"the new environment cannot describe its build: {str(exc)[-1500:]}", "\n".join(log)) from None
        installed = environment["build"].get("torch_version", "")
        if installed != str(version):
            raise IntakeFailed(f"asked for torch {version}, the environment has {installed or 'none'}", "\n".join(log))
        final_python = str(target / "env" / "bin" / "python")
        environment["build"].setdefault("environment", {})["python_executable"] = final_python
        seconds = time.monotonic() - started
        (scratch / MARKER).write_text(json.dumps({"version": str(version), "python": final_python, "environment": environment,
                                                  "seconds": round(seconds, 2), "installer": config.installer}, indent=1))
        try:
            os.rename(scratch, target)
        except OSError:  # another process took it in meanwhile: theirs is used
            if (found := find_made(config, version)) is None:
                raise
            return found
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return TakenIn(version=str(version), path=str(target), python=final_python, environment=environment, seconds=seconds,
                   cached=False, log="\n".join(log)[-20000:])


def made(config: IntakeConfig) -> list[TakenIn]:
    """Every environment taken in, newest (most recently wanted) first."""
    root = envs_dir(config)
    found = []
    for path in root.iterdir() if root.is_dir() else ():
        marker = path / MARKER
        if path.name.startswith(".") or not marker.is_file():
            continue
        try:
            facts = json.loads(marker.read_text())
        except ValueError:
            continue
        found.append((marker.stat().st_mtime, TakenIn(version=facts["version"], path=str(path), python=facts["python"],
                                                      environment=facts["environment"], seconds=0.0, cached=True)))
    return [taken for _, taken in sorted(found, key=lambda pair: pair[0], reverse=True)]


def prune(config: IntakeConfig, *, protect: set[str]) -> list[TakenIn]:
    """Remove all but the newest ``keep`` environments, never one whose git sha or version is in
    ``protect`` (an open finding or bisection refers to it), and half-made ones older than a day.
    Returns those removed."""
    removed = []
    for taken in made(config)[config.keep:]:
        if taken.version in protect or taken.environment["build"].get("git_sha") in protect:
            continue
        doomed = Path(taken.path).with_name(f".removing-{Path(taken.path).name}")
        os.rename(taken.path, doomed)  # gone from made() at once
        shutil.rmtree(doomed, ignore_errors=True)
        removed.append(taken)
    for stale in envs_dir(config).glob(".making-*") if envs_dir(config).is_dir() else ():
        if time.time() - stale.stat().st_mtime > 86400:
            shutil.rmtree(stale, ignore_errors=True)
    return removed
