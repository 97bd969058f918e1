"""Name -> workload. The suite is every registered workload; ``module:Class`` names load others (tests)."""
from __future__ import annotations

import importlib

from workloads.base import Workload

_REGISTRY: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"workload name {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_suite() -> None:
    importlib.import_module("workloads.suite")


def all_workloads() -> list[Workload]:
    _load_suite()
    return [cls() for _, cls in sorted(_REGISTRY.items())]


def get_workload(name: str) -> Workload:
    """A registered workload by name, or ``package.module:ClassName`` for one defined elsewhere."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        cls = getattr(importlib.import_module(module_name), attr)
        return cls()
    _load_suite()
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown workload {name!r}; known: {known}") from None
