"""The workload catalog as data: what ``python -m runner list --json`` prints, committed as
``contract/catalog.json`` (a test keeps it equal to ``workloads.suite``).

The dashboard reads it to check names, describe workloads and plan cases without importing torch or
``workloads``. ``module:Class`` names (test workloads) are found only in the extra catalogs listed in
``PTBENCH_WORKLOAD_CATALOGS`` (paths, ``os.pathsep``-separated), and only when their module is
allowed by ``PTBENCH_WORKLOAD_MODULES`` (as in ``workloads.registry``).

The families' models (``hf:BertForMaskedLM``, ``timm:resnet50@train``: docs/families.md) are in
``contract/families.json`` (``python -m runner list --family all --json``), every option set of
every listed model, whether or not a host can build it: a family name is looked up there, never
parsed or imported here.
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

CATALOG_PATH = Path(__file__).with_name("catalog.json")
FAMILIES_PATH = Path(__file__).with_name("families.json")
EXTRA_CATALOGS_ENV = "PTBENCH_WORKLOAD_CATALOGS"
ALLOWED_MODULES_ENV = "PTBENCH_WORKLOAD_MODULES"


@dataclass(frozen=True)
class Entry:
    """One workload: the run document's ``workloads`` entry plus the dtypes it supports (first: default).
    ``source`` is the ``module:Class`` that defines it, for a workload outside the suite."""

    name: str
    category: str
    phase: str
    dtypes: tuple[str, ...]
    dynamic_dims: tuple[str, ...]
    description: str
    source: str = ""
    family: str = ""  # the family prefix of a family's model ("hf"); "" for the suite and module:Class
    dim_roles: tuple[str, ...] = ()  # each dynamic dim's role (batch, sequence: contract.dims), in order

    @classmethod
    def from_json(cls, data: dict) -> "Entry":
        return cls(name=data["name"], category=data["category"], phase=data["phase"], dtypes=tuple(data["dtypes"]),
                   dynamic_dims=tuple(data["dynamic_dims"]), description=data["description"], source=data.get("source", ""),
                   family=data.get("family", ""), dim_roles=tuple(data.get("dim_roles", ())))

    def to_json(self) -> dict:
        data = {"name": self.name, "category": self.category, "phase": self.phase, "dtypes": list(self.dtypes),
                "dynamic_dims": list(self.dynamic_dims), "description": self.description}
        if any(self.dim_roles):
            data["dim_roles"] = list(self.dim_roles)
        if self.family:
            data["family"] = self.family
        return {**data, "source": self.source} if self.source else data

    def describe(self) -> dict:
        """The entry in a run document's ``workloads`` list (as ``Workload.describe``)."""
        return {"name": self.name, "category": self.category, "phase": self.phase,
                "dynamic_dims": list(self.dynamic_dims), "description": self.description}


def _read(path: Path) -> list[Entry]:
    return [Entry.from_json(item) for item in json.loads(Path(path).read_text())]


@functools.cache
def _extra(paths: str) -> dict[str, Entry]:
    return {e.source: e for p in paths.split(os.pathsep) if p for e in _read(Path(p)) if e.source}


def suite_entries() -> list[Entry]:
    """The suite's workloads, by name."""
    return _read(CATALOG_PATH)


@functools.cache
def family_entries() -> dict[str, Entry]:
    """Every family name, by name."""
    return {e.name: e for e in _read(FAMILIES_PATH)}


def family_prefixes() -> frozenset[str]:
    return frozenset(e.family for e in family_entries().values())


def _allowed(source: str) -> bool:
    modules = {m.strip() for m in os.environ.get(ALLOWED_MODULES_ENV, "").split(",") if m.strip()}
    return source.partition(":")[0] in modules


def requestable_name(name: str) -> str:
    """The name a run request takes for a workload stored as ``name``: itself for the suite's and
    families' workloads; the ``module:Class`` of an admitted extra catalog's entry of that name
    (bisection re-requests a stored case: docs/bisect.md)."""
    if name.partition(":")[0] in family_prefixes() or any(e.name == name for e in suite_entries()):
        return name
    extra = [e.source for e in _extra(os.environ.get(EXTRA_CATALOGS_ENV, "")).values() if e.name == name and _allowed(e.source)]
    return extra[0] if extra else name


def resolve_entries(names: list[str] | None) -> list[tuple[str, Entry]]:
    """(name as requested, Entry) pairs, the whole suite for no names; raises LookupError with the
    message ``runner.listing.resolve_workloads`` gives."""
    suite = suite_entries()
    if not names:
        return [(e.name, e) for e in suite]
    by_name = {e.name: e for e in suite}
    resolved = []
    for name in names:
        if name.partition(":")[0] in family_prefixes():
            entry = family_entries().get(name)
            if entry is None:
                raise LookupError(f"workload {name!r}: unknown workload {name!r}: no such model or option set in its family "
                                  "(python -m runner list --family shows the models; docs/families.md the options)")
        elif ":" in name:
            entry = _extra(os.environ.get(EXTRA_CATALOGS_ENV, "")).get(name) if _allowed(name) else None
            if entry is None:
                raise LookupError(f"workload {name!r}: unknown workload {name!r}: only catalog names are accepted here "
                                  "(module:Class names belong to the local command line)")
        elif (entry := by_name.get(name)) is None:
            raise LookupError(f"workload {name!r}: unknown workload {name!r}; known: {', '.join(sorted(by_name))}")
        resolved.append((name, entry))
    return resolved
