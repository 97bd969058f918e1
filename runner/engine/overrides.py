"""Build-variant overrides inside the build's own interpreter: check them against its torch, apply them.

``contract.variants`` checks their form; whether ``inductor.KEY`` exists, and which type its value
must have, depends on the torch release, so the check runs where that torch is (the environment
probe, before any case runs) and again where they are applied (the case process, before anything
compiles). ``config_catalog`` describes every key of this torch for the dashboard, which checks a
variant's keys against its base build's catalog (``contract.variants.catalog_problems``) without torch. Environment overrides reach the case process through its environment
(``runner.engine.executor``), before torch is imported.
"""
from __future__ import annotations

import importlib

from contract.variants import CONFIG_SECTIONS, catalog_problems


def _module(section: str):
    return importlib.import_module(CONFIG_SECTIONS[section])


def _type_description(declared, default) -> dict:
    """A catalog entry (``contract.variants``) from a declared type (``value_type``: a class, a
    ``Union``/``X | None``, a ``Literal``, ``list[int]``...) or, without one, the default's type."""
    import types
    import typing

    if declared is None or declared is type(None):
        if default is None:
            return {"type": "any", "nullable": True}
        declared = type(default)
    origin, args = typing.get_origin(declared), typing.get_args(declared)
    if origin is typing.Literal:
        choices = [a for a in args if a is None or isinstance(a, (bool, int, float, str))]
        kinds = sorted({type(c).__name__ for c in choices if c is not None}) or ["any"]
        return {"type": "|".join(kinds), "choices": [c for c in choices if c is not None], "nullable": None in choices}
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(declared, types.UnionType)):
        nullable = type(None) in args
        kinds: list[str] = []
        for arg in (a for a in args if a is not type(None)):
            part = _type_description(arg, default)
            nullable = nullable or bool(part.get("nullable"))
            kinds += [k for k in part["type"].split("|") if k not in kinds]
        return {"type": "|".join(kinds) or "any", "nullable": nullable}
    if declared is typing.Any:
        return {"type": "any", "nullable": True}
    if isinstance(declared, type) and declared.__name__ in ("bool", "int", "float", "str"):
        return {"type": declared.__name__, "nullable": default is None}
    name = getattr(origin or declared, "__name__", None) or str(declared)
    return {"type": "callable" if name == "Callable" else name, "nullable": default is None}


def _module_entries(module) -> dict[str, dict]:
    """Every key of one config module with its catalog entry. The config machinery moved between
    releases: ``_config`` holds ``_ConfigEntry`` objects with a ``value_type`` (torch 2.5 onwards,
    2.11 and 2.13 included), ``_default`` holds plain defaults (2.1 to 2.4); without either, the
    module's public attributes."""
    entries = getattr(module, "_config", None)
    if isinstance(entries, dict):
        return {name: _compact(_type_description(getattr(e, "value_type", None), getattr(e, "default", None)))
                for name, e in entries.items()}
    defaults = getattr(module, "_default", None)
    if not isinstance(defaults, dict):
        copy = getattr(module, "get_config_copy", None)
        defaults = copy() if callable(copy) else {
            k: v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, (bool, int, float, str, list, dict, set, tuple, type(None)))}
    return {name: _compact(_type_description(None, value)) for name, value in defaults.items()}


def _compact(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if v or k == "type"}


def config_catalog() -> dict:
    """This torch's config keys with their types, as ``contract.variants`` reads them: what the
    dashboard checks a variant's overrides against without this torch."""
    import torch

    return {"torch_version": torch.__version__,
            "sections": {section: dict(sorted(_module_entries(_module(section)).items())) for section in CONFIG_SECTIONS}}


def check_config(config: dict) -> list[dict]:
    """[{field, message}] for every key this torch does not have or whose value has the wrong type."""
    return catalog_problems(config, config_catalog())


def apply_config(config: dict) -> None:
    """Set each override on its config module; raises ValueError naming the first bad key."""
    problems = check_config(config)
    if problems:
        raise ValueError("; ".join(f"{p['field']}: {p['message']}" for p in problems))
    for key, value in config.items():
        section, _, name = key.partition(".")
        setattr(_module(section), name, value)
