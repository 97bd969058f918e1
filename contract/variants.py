"""Build variants: a build plus compiler settings applied in the case process before anything compiles.

An override is either a config key, ``SECTION.KEY`` with SECTION one of ``inductor``, ``dynamo``,
``functorch`` (``torch._inductor.config`` ...; KEY may be dotted, ``triton.persistent_reductions``),
or an environment variable named ``TORCHINDUCTOR_*``, ``TORCHDYNAMO_*``, ``TORCH_*`` or ``TRITON_*``. This module checks
their form only; whether a key exists and takes a value of that type depends on the build's torch and
is checked in the build's interpreter (``runner.engine.overrides``). Only settings that are data are
admitted (``contract.settings_policy``, issue #33): ``Overrides.build`` refuses the others, naming
them, unless ``allow`` admits them (a worker's ``PTBENCH_ALLOW_SETTINGS``; ``RECORDED`` for what was
already stored or run).

A variant is its own build: the base build's torch version and git sha, and a ``local_label`` derived
from the overrides (readable, with a short hash), so its series never mix with the base build's.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from contract.settings_policy import DATA_ONLY, RECORDED, Allowance, setting_refusal

CONFIG_SECTIONS = {
    "inductor": "torch._inductor.config",
    "dynamo": "torch._dynamo.config",
    "functorch": "torch._functorch.config",
}
ENV_PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_", "TORCH_", "TRITON_")
# The runner sets these per case (fresh caches); a variant may not move them.
RESERVED_ENV = frozenset({"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"})
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
MAX_OVERRIDES = 32
MAX_VALUE_CHARS = 1000
LABEL_MAX = 100
Scalar = bool | int | float | str | None


class InvalidOverride(ValueError):
    """``field`` names the override (``config.inductor.KEY`` or ``env.NAME``); ``args[0]`` says why."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


def parse_value(text: str) -> Scalar:
    """A command-line value: true/false, null/none, an int, a float, else the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def split_assignment(text: str, what: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> (NAME, VALUE); raises InvalidOverride naming ``what``."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise InvalidOverride(what, f"{text!r} is not NAME=VALUE")
    return name.strip(), value


def check_config_key(key: str) -> str:
    """``SECTION.KEY`` with a known section; returns it."""
    section, _, rest = key.partition(".")
    if section not in CONFIG_SECTIONS or not rest or not _KEY.fullmatch(rest):
        raise InvalidOverride(
            f"config.{key}", f"not a config key: expected SECTION.KEY with SECTION one of {', '.join(CONFIG_SECTIONS)}"
        )
    return key


def check_env_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name) or not name.startswith(ENV_PREFIXES):
        raise InvalidOverride(f"env.{name}", f"not an allowed variable: names start with {', '.join(ENV_PREFIXES)}")
    if name in RESERVED_ENV:
        raise InvalidOverride(f"env.{name}", "set by the runner for every case (fresh caches); a variant cannot change it")
    return name


def _check_value(field_name: str, value: object) -> Scalar:
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise InvalidOverride(field_name, f"values are true/false, numbers, strings or null, not {type(value).__name__}")
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        raise InvalidOverride(field_name, f"at most {MAX_VALUE_CHARS} characters")
    if isinstance(value, float) and value != value:
        raise InvalidOverride(field_name, "NaN is not a value")
    return value


@dataclass(frozen=True)
class Overrides:
    config: dict[str, Scalar] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, config: object = None, env: object = None, *, allow: Allowance = DATA_ONLY) -> "Overrides":
        """From the API's / document's objects; raises InvalidOverride naming the first bad entry,
        a setting that is not data included (``contract.settings_policy``) unless ``allow`` admits it."""
        config = {} if config is None else config
        env = {} if env is None else env
        if not isinstance(config, dict):
            raise InvalidOverride("config", 'an object {"SECTION.KEY": value}')
        if not isinstance(env, dict):
            raise InvalidOverride("env", 'an object {"NAME": "value"}')
        if len(config) + len(env) > MAX_OVERRIDES:
            raise InvalidOverride("config", f"at most {MAX_OVERRIDES} overrides in all")
        checked_config = {check_config_key(str(k)): _check_value(f"config.{k}", v) for k, v in config.items()}
        checked_env = {}
        for name, value in env.items():
            check_env_name(str(name))
            if not isinstance(value, str):
                raise InvalidOverride(f"env.{name}", "environment values are strings")
            checked_env[name] = _check_value(f"env.{name}", value)
        for kind, checked in (("config", checked_config), ("env", checked_env)):
            for name, value in checked.items():
                if problem := setting_refusal(kind, name, value, allow):
                    raise InvalidOverride(f"{kind}.{name}", problem)
        return cls(config=dict(sorted(checked_config.items())), env=dict(sorted(checked_env.items())))

    @classmethod
    def from_cli(cls, config: list[str] | None, env: list[str] | None, *, allow: Allowance = DATA_ONLY) -> "Overrides":
        """From repeated ``--config SECTION.KEY=VALUE`` and ``--env NAME=VALUE``."""
        config_pairs = [split_assignment(text, "--config") for text in config or []]
        env_pairs = [split_assignment(text, "--env") for text in env or []]
        return cls.build({k: parse_value(v) for k, v in config_pairs}, dict(env_pairs), allow=allow)

    @classmethod
    def from_document(cls, build: dict, *, allow: Allowance = DATA_ONLY) -> "Overrides":
        overrides = build.get("overrides") or {}
        return cls.build(overrides.get("config"), overrides.get("env"), allow=allow)

    @classmethod
    def recorded(cls, stored: dict | None) -> "Overrides":
        """Overrides as stored or as a run document records them (``{"config", "env"}``): their form
        is checked, not whether they are data (they were checked where they were made or run)."""
        stored = stored or {}
        return cls.build(stored.get("config"), stored.get("env"), allow=RECORDED)

    def __bool__(self) -> bool:
        return bool(self.config or self.env)

    def as_document(self) -> dict:
        return {"config": dict(self.config), "env": dict(self.env)}

    def digest(self) -> str:
        canonical = json.dumps(self.as_document(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:6]

    def cli_arguments(self) -> list[str]:
        """The ``--config``/``--env`` arguments that reproduce these overrides."""
        argv: list[str] = []
        for key, value in self.config.items():
            argv += ["--config", f"{key}={_cli_value(value)}"]
        for name, value in self.env.items():
            argv += ["--env", f"{name}={value}"]
        return argv

    def summary(self) -> str:
        """One line for pages: ``inductor.coordinate_descent_tuning=True, TORCHINDUCTOR_X=1``."""
        parts = [f"{k}={_cli_value(v)}" for k, v in self.config.items()] + [f"{k}={v}" for k, v in self.env.items()]
        return ", ".join(parts)


def _cli_value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _readable(overrides: Overrides) -> str:
    parts = []
    for key, value in overrides.config.items():
        leaf = key.rsplit(".", 1)[-1]
        if value is True:
            parts.append(leaf)
        elif value is False:
            parts.append(f"no_{leaf}")
        else:
            parts.append(f"{leaf}-{value}")
    parts += [f"{name.lower()}-{value}" for name, value in overrides.env.items()]
    return re.sub(r"[^a-z0-9_.-]+", "_", ".".join(parts).lower()).strip("._-") or "variant"


def variant_label(base_local_label: str, overrides: Overrides) -> str:
    """The variant build's ``local_label``: base label, readable overrides, short hash (<= 100 chars).

    ``cu130`` + ``inductor.coordinate_descent_tuning=True`` -> ``cu130.coordinate_descent_tuning.1a2b3c``.
    Two different sets of overrides never share a label (the hash); the base build (no overrides)
    keeps its own label.
    """
    if not overrides:
        return base_local_label
    digest = overrides.digest()
    prefix = f"{base_local_label}." if base_local_label else ""
    room = LABEL_MAX - len(prefix) - len(digest) - 1
    if room < 8:  # a very long base label: keep the hash, which alone tells variants apart
        return (prefix[: LABEL_MAX - len(digest) - 1] + digest) if prefix else digest
    return f"{prefix}{_readable(overrides)[:room].rstrip('._-')}.{digest}"


def apply_variant(build: dict, overrides: Overrides) -> dict:
    """The run document's ``build`` for a variant of ``build``: its label and overrides; a plain
    build unchanged."""
    if not overrides:
        return build
    return {**build, "local_label": variant_label(build.get("local_label") or "", overrides),
            "overrides": overrides.as_document()}


# --- the config catalog of a build's torch ---------------------------------------------------------
# ``runner.engine.overrides.config_catalog`` writes it in the build's interpreter (the environment
# probe of ``register_build`` and of workers); the dashboard stores it on the build and checks a
# variant's config keys against its base build's catalog without that torch:
#   {"torch_version": "2.13.0+cpu", "sections": {"inductor": {"max_autotune": {"type": "bool"}, ...}}}
# An entry's ``type`` is ``bool``, ``int``, ``float``, ``str``, ``any`` (unknown: every value) or
# another type's name (``list``, ``dict``, ``callable``: no value of an override gives one); with
# ``nullable`` null is allowed, with ``choices`` only those values (a ``Literal``).
CATALOG_SCALARS = ("bool", "int", "float", "str")


def catalog_entry_problem(value: Scalar, entry: dict) -> str | None:
    """Why ``value`` cannot be set on a config entry of the catalog, or None."""
    kinds = [k for k in str(entry.get("type") or "any").split("|") if k]
    choices = entry.get("choices")
    if value is None:  # a nullable entry, or one whose type is unknown (the runner always allowed null)
        return None
    if choices is not None:
        return None if any(value == c and type(value) is type(c) for c in choices) else \
            f"expects one of {', '.join(_cli_value(c) for c in choices)}"
    if "any" in kinds:
        return None
    if isinstance(value, bool):
        fits = "bool" in kinds
    elif isinstance(value, int):
        fits = "int" in kinds or "float" in kinds
    elif isinstance(value, float):
        fits = "float" in kinds
    else:
        fits = "str" in kinds
    if fits:
        return None
    scalars = [k for k in kinds if k in CATALOG_SCALARS]
    if not scalars:
        return f"expects a {'/'.join(kinds)}, which the command line cannot give"
    wording = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string"}
    return "expects " + " or ".join(wording[k] for k in scalars)


def catalog_problems(config: dict, catalog: dict) -> list[dict]:
    """[{field, message}] for every config key ``catalog`` lacks or whose value has the wrong type
    (the same answers as ``runner.engine.overrides.check_config`` in that build's interpreter)."""
    sections = catalog.get("sections") or {}
    torch_version = catalog.get("torch_version") or "?"
    problems = []
    for key, value in config.items():
        section, _, name = key.partition(".")
        field_name = f"config.{key}"
        entry = (sections.get(section) or {}).get(name)
        if entry is None:
            problems.append({"field": field_name, "message": f"torch {torch_version} has no {section} config key {name!r}"})
        elif problem := catalog_entry_problem(value, entry):
            problems.append({"field": field_name, "message": f"{problem} (got {value!r})"})
    return problems
