"""A worker's intake settings: its environment, or a TOML file beside the worker that the
environment names (``PTBENCH_INTAKE_FILE``; a variable set in the environment wins over the file).
Never from the API or a message.

    PTBENCH_INTAKE_INDEX       a package index: a directory of wheels, or a simple index's URL
                               (https://download.pytorch.org/whl/nightly/cu130); required
    PTBENCH_INTAKE_TAKE        pre (default): the newest torch pre-release (a nightly); newest: the newest
                               version, pre-releases included; release: the newest final release; or a
                               pinned version, e.g. 2.13.0
    PTBENCH_INTAKE_VARIANT     the local version part a wheel must carry, e.g. cu130 or cpu (default: any)
    PTBENCH_INTAKE_COMPANIONS  packages installed beside torch at versions that fit it (the resolver
                               picks them; triton comes with torch as its dependency), comma-separated,
                               e.g. "torchvision,transformers,timm" (default: none)
    PTBENCH_INTAKE_DIR         where the environments live (default $TMPDIR/ptbench-intake)
    PTBENCH_INTAKE_CACHE       the installer's cache (default DIR/cache): a build already in it fills
                               an environment through hard links in seconds
    PTBENCH_INTAKE_KEEP        how many taken-in builds to keep (default 5; those the dashboard names as
                               referred to by an open finding or bisection are kept besides)
    PTBENCH_INTAKE_PYTHON      the interpreter the environments are made from (default: the worker's)
    PTBENCH_INTAKE_INHERIT     1: each environment sees that interpreter's packages after its own
                               (a .pth file, as overlay builds do) and only torch and the companions
                               are installed, without their dependencies (default 0: a whole environment)
    PTBENCH_INTAKE_INSTALLER   uv (where installed) or pip (default: uv when found, else pip)

The file's keys are the names without the prefix, lower case (``index = "/srv/wheels"``,
``companions = ["torchvision", "timm"]``, ``keep = 3``)."""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

PREFIX = "PTBENCH_INTAKE_"
KEYS = ("index", "take", "variant", "companions", "dir", "cache", "keep", "python", "inherit", "installer")
TAKE_WORDS = ("pre", "newest", "release")
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_VARIANT = re.compile(r"^[a-z0-9][a-z0-9.]{0,31}$")


class IntakeConfigError(ValueError):
    """A setting is missing or malformed; the message names it."""


@dataclass(frozen=True)
class IntakeConfig:
    index: str
    take: str = "pre"
    variant: str = ""
    companions: tuple[str, ...] = ()
    dir: Path = Path(tempfile.gettempdir()) / "ptbench-intake"
    cache: Path | None = None
    keep: int = 5
    python: str = sys.executable
    inherit: bool = False
    installer: str = "pip"

    @property
    def cache_dir(self) -> Path:
        return self.cache or self.dir / "cache"

    @property
    def index_is_url(self) -> bool:
        return self.index.startswith(("http://", "https://"))

    def describe(self) -> dict:
        """What the dashboard is told of this worker's intake (no secrets: an index URL's user and
        password are dropped)."""
        index = re.sub(r"//[^/@]*@", "//", self.index)
        return {"index": index, "take": self.take, "variant": self.variant, "companions": list(self.companions),
                "keep": self.keep, "installer": self.installer, "inherit": self.inherit}

    @classmethod
    def from_env(cls, environ=None) -> IntakeConfig | None:
        """The worker's intake, or None when it has none (no index set)."""
        env = os.environ if environ is None else environ
        values: dict = {}
        if path := env.get(f"{PREFIX}FILE"):
            values.update(_read_file(path))
        for key in KEYS:
            if (text := env.get(PREFIX + key.upper())) not in (None, ""):
                values[key] = text
        if not values.get("index"):
            return None
        return cls.parse(values)

    @classmethod
    def parse(cls, values: dict) -> IntakeConfig:
        index = str(values["index"]).strip()
        if not index.startswith(("http://", "https://")):
            if not os.path.isabs(index) or not os.path.isdir(index):
                raise IntakeConfigError(f"{PREFIX}INDEX={index!r}: neither an http(s) URL nor an absolute directory")
        take = str(values.get("take") or "pre").strip()
        if take not in TAKE_WORDS:
            try:
                Version(take)
            except InvalidVersion:
                raise IntakeConfigError(f"{PREFIX}TAKE={take!r}: pre, newest, release or a version such as 2.13.0") from None
        variant = str(values.get("variant") or "").strip().lower()
        if variant and not _VARIANT.fullmatch(variant):
            raise IntakeConfigError(f"{PREFIX}VARIANT={variant!r}: a local version part such as cu130 or cpu")
        companions = values.get("companions") or ()
        if isinstance(companions, str):
            companions = [c.strip() for c in companions.split(",") if c.strip()]
        for name in companions:
            if not isinstance(name, str) or not _PACKAGE.fullmatch(name) or name.lower() == "torch":
                raise IntakeConfigError(f"{PREFIX}COMPANIONS: {name!r} is not a package name (torch itself is implied)")
        directory = Path(str(values.get("dir") or Path(tempfile.gettempdir()) / "ptbench-intake"))
        cache = Path(str(values["cache"])) if values.get("cache") else None
        for name, path in (("DIR", directory), ("CACHE", cache)):
            if path is not None and not path.is_absolute():
                raise IntakeConfigError(f"{PREFIX}{name}={str(path)!r}: an absolute path")
        keep = _positive(values.get("keep", 5))
        python = str(values.get("python") or sys.executable)
        if shutil.which(python) is None:
            raise IntakeConfigError(f"{PREFIX}PYTHON={python!r}: not an executable file")
        inherit = str(values.get("inherit", "0")).strip().lower() in ("1", "true", "yes", "on")
        installer = str(values.get("installer") or ("uv" if uv_path() else "pip")).strip()
        if installer not in ("uv", "pip"):
            raise IntakeConfigError(f"{PREFIX}INSTALLER={installer!r}: uv or pip")
        if installer == "uv" and not uv_path():
            raise IntakeConfigError(f"{PREFIX}INSTALLER=uv: uv is not installed here")
        return cls(index=index, take=take, variant=variant, companions=tuple(companions), dir=directory, cache=cache,
                   keep=keep, python=python, inherit=inherit, installer=installer)


def uv_path() -> str | None:
    """The ``uv`` beside this interpreter (a venv's bin), else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else shutil.which("uv")


def _positive(value) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise IntakeConfigError(f"{PREFIX}KEEP={value!r}: not an integer") from None
    if number < 1:
        raise IntakeConfigError(f"{PREFIX}KEEP={value!r}: at least 1")
    return number


def _read_file(path: str) -> dict:
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise IntakeConfigError(f"{PREFIX}FILE={path!r}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise IntakeConfigError(f"{PREFIX}FILE={path!r}: not TOML ({exc})") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise IntakeConfigError(f"{PREFIX}FILE={path!r}: unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS)})")
    return data
