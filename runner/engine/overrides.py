"""Build-variant overrides inside the build's own interpreter: check them against its torch, apply them.

``contract.variants`` checks their form; whether ``inductor.KEY`` exists, and which type its value
must have, depends on the torch release, so the check runs where that torch is (the environment
probe, before any case runs) and again where they are applied (the case process, before anything
compiles). Environment overrides reach the case process through its environment
(``runner.engine.executor``), before torch is imported.
"""
from __future__ import annotations

import importlib

from contract.variants import CONFIG_SECTIONS


def _module(section: str):
    return importlib.import_module(CONFIG_SECTIONS[section])


def _entry_type(module, name: str) -> type | None:
    """The declared type of a config entry (None: any), or KeyError when the key does not exist."""
    entries = getattr(module, "_config", None)
    if entries is not None:
        entry = entries[name]  # KeyError: no such key in this release
        declared = getattr(entry, "value_type", None)
        if isinstance(declared, type):
            return declared
        default = getattr(entry, "default", None)
        return None if default is None else type(default)
    value = module
    for part in name.split("."):
        value = getattr(value, part)  # AttributeError -> treated as a missing key below
    return None if value is None else type(value)


def _type_problem(value: object, expected: type | None) -> str | None:
    if expected is None or value is None:
        return None
    if expected is bool:
        return None if isinstance(value, bool) else "expects true or false"
    if expected is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else "expects an integer"
    if expected is float:
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "expects a number"
    if expected is str:
        return None if isinstance(value, str) else "expects a string"
    if isinstance(value, expected):
        return None
    return f"expects a {expected.__name__}, which the command line cannot give"


def check_config(config: dict) -> list[dict]:
    """[{field, message}] for every key this torch does not have or whose value has the wrong type."""
    import torch

    problems = []
    for key, value in config.items():
        section, _, name = key.partition(".")
        field_name = f"config.{key}"
        try:
            expected = _entry_type(_module(section), name)
        except (KeyError, AttributeError):
            problems.append({"field": field_name, "message": f"torch {torch.__version__} has no {section} config key {name!r}"})
            continue
        problem = _type_problem(value, expected)
        if problem:
            problems.append({"field": field_name, "message": f"{problem} (got {value!r})"})
    return problems


def apply_config(config: dict) -> None:
    """Set each override on its config module; raises ValueError naming the first bad key."""
    problems = check_config(config)
    if problems:
        raise ValueError("; ".join(f"{p['field']}: {p['message']}" for p in problems))
    for key, value in config.items():
        section, _, name = key.partition(".")
        setattr(_module(section), name, value)
