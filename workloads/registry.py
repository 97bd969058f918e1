"""Name -> workload. The catalog is every registered workload of ``workloads.suite``, and every
model of a registered family (``hf:BertForMaskedLM``; ``workloads.families``, docs/families.md).

``package.module:ClassName`` names a workload defined elsewhere. Importing a module named by a
caller runs its code, so only two callers may do it: the local CLI (``python -m runner run`` on the
user's own machine, ``allow_import=True``) and modules listed in ``PTBENCH_WORKLOAD_MODULES``
(comma-separated module names, set by the test suite for its own sample workloads; empty in
production). Every other entry point (the API, the dashboard, workers) accepts catalog names only.
"""
from __future__ import annotations

import importlib
import os

from workloads import names
from workloads.base import Distributed, Workload

_REGISTRY: dict[str, type[Workload]] = {}
_FAMILIES: dict[str, object] = {}  # prefix -> workloads.families._api.Family
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


def register_family(family):
    """Make ``family.prefix + ":<model>"`` names resolve through ``family`` (before any import)."""
    if not family.prefix or not family.prefix.isidentifier() or "." in family.prefix:
        raise ValueError(f"{type(family).__qualname__}: prefix {family.prefix!r} is no identifier")
    if family.prefix in _FAMILIES and type(_FAMILIES[family.prefix]) is not type(family):
        raise ValueError(f"family prefix {family.prefix!r} is registered twice")
    _FAMILIES[family.prefix] = family
    return family


def families() -> dict:
    """Every registered family by prefix (importing ``workloads.families`` registers its modules')."""
    importlib.import_module("workloads.families")
    return dict(_FAMILIES)


def family_models(prefix: str) -> list[tuple[object, str]]:
    """(FamilyModel, why this host cannot build it or "") for each model ``prefix``'s family lists."""
    family = families().get(prefix)
    if family is None:
        raise UnknownWorkload(f"unknown family {prefix!r}; known: {', '.join(sorted(_FAMILIES))}")
    return [(model, family.missing(model)) for model in family.models()]


def _family_workload(name: str) -> Workload | None:
    """The workload a family name spells; None for a name with no family prefix."""
    try:
        parsed = names.parse(name, families=families())
    except names.BadName as exc:
        raise UnknownWorkload(str(exc)) from None
    if parsed is None:
        return None
    family = _FAMILIES[parsed.family]
    model = family.find(parsed.model)
    if model is None:
        known = ", ".join(m.name for m in family.models())
        raise UnknownWorkload(f"unknown workload {name!r}: family {parsed.family} lists no {parsed.model!r}; it lists: {known}")
    why = family.missing(model)
    if why:
        raise UnknownWorkload(f"workload {name!r} cannot be built here: {why}")
    try:
        workload = model.factory(name=str(parsed), train=parsed.train, axes=parsed.axes, **names.step_kwargs(parsed), **model.args)
    except ValueError as exc:
        raise UnknownWorkload(f"workload {name!r}: {exc}") from None
    except TypeError:  # a provider whose factory takes no step
        raise UnknownWorkload(f"workload {name!r}: family {parsed.family} takes no @{parsed.step}") from None
    if parsed.parallel:
        workload.distributed = Distributed(parallel=parsed.parallel, compile_first=parsed.compile_first,
                                           checkpoint=parsed.checkpoint)
    return workload


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
    ``UnknownWorkload`` before importing anything it may not import. A family name
    (``hf:BertForMaskedLM``) is resolved by its family first, whatever ``allow_import`` says."""
    family_workload = _family_workload(name)
    if family_workload is not None:
        return family_workload
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
