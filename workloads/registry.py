"""Name -> workload. The catalog is every registered workload of ``workloads.suite``.

``package.module:ClassName`` names a workload defined elsewhere. Importing a module named by a
caller runs its code, so only two callers may do it: the local CLI (``python -m runner run`` on the
user's own machine, ``allow_import=True``) and modules listed in ``PTBENCH_WORKLOAD_MODULES``
(comma-separated module names, set by the test suite for its own sample workloads; empty in
production). Every other entry point (the API, the dashboard, workers) accepts catalog names only.
"""
from __future__ import annotations

import importlib
import os

from workloads.base import Workload

_REGISTRY: dict[str, type[Workload]] = {}
ALLOWED_MODULES_ENV = "PTBENCH_WORKLOAD_MODULES"


class UnknownWorkload(KeyError):
    """A name that is neither in the catalog nor an allowed ``module:Class``; ``args[0]`` says why."""


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


def allowed_modules() -> frozenset[str]:
    """Modules whose ``module:Class`` workloads any entry point may load (``PTBENCH_WORKLOAD_MODULES``)."""
    return frozenset(m.strip() for m in os.environ.get(ALLOWED_MODULES_ENV, "").split(",") if m.strip())


def importable(name: str, *, allow_import: bool = False) -> bool:
    """Whether ``get_workload`` may import the module that ``name`` (``module:Class``) names."""
    module_name = name.partition(":")[0]
    return allow_import or module_name in allowed_modules()


def get_workload(name: str, *, allow_import: bool = False) -> Workload:
    """A catalog workload by name; ``package.module:ClassName`` only with ``allow_import`` (the
    local CLI) or when its module is listed in ``PTBENCH_WORKLOAD_MODULES``. Raises
    ``UnknownWorkload`` before importing anything it may not import."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        if not importable(name, allow_import=allow_import):
            raise UnknownWorkload(
                f"unknown workload {name!r}: only catalog names are accepted here "
                "(module:Class names belong to the local command line)"
            )
        cls = getattr(importlib.import_module(module_name), attr)
        if not (isinstance(cls, type) and issubclass(cls, Workload)):
            raise UnknownWorkload(f"{name!r} is not a Workload class")
        return cls()
    _load_suite()
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownWorkload(f"unknown workload {name!r}; known: {known}") from None
