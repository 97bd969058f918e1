"""Suites as workload groupings, apart from sizes (docs/families.md, "On the dashboard").

A run's size (``tiny``, ``full``: ``--size``, the API's ``size``) is apart from its suite. (The run
document's ``run.suite`` is still its size: schema version 1.) A workload's suite is its grouping, read
from its name: a registered family prefix (``hf:BertForMaskedLM`` -> ``hf``), else ``core`` (the
curated workloads of ``contract/catalog.json``). ``all`` is every suite together. Nothing is parsed
beyond the prefix and the options after ``@`` (docs/families.md, "Names"); no torch, no Django.
"""
from __future__ import annotations

from dataclasses import dataclass

from contract.catalog import family_entries, family_prefixes, suite_entries
from contract.vocabulary import SIZES

CORE = "core"
ALL = "all"
# The suite of the models built for distributed training steps: it stands for their DDP / FSDP
# cases (docs/distributed.md), which need a worker that sees several devices, so ``all`` leaves it out.
DISTRIBUTED = "dist"
DISTRIBUTED_OPTIONS = ("ddp", "fsdp")
OPTION_MARK = "@"
OPTION_JOIN = "+"
# What a family's model name is, in words (the workload page: "transformers class BertForMaskedLM").
MODEL_KINDS = {"hf": "transformers class", "timm": "timm model", "torchvision": "torchvision model", "dist": "distributed-step model"}


def suite_names() -> tuple[str, ...]:
    """The suites, in the order pages list them: core, the families by prefix, then all."""
    return (CORE, *sorted(family_prefixes()), ALL)


def suite_problem(value: object, *, size_field: str = "size") -> str | None:
    """Why ``value`` is no suite name, or None. A size where a suite goes (``suite`` meant the size
    before #34) is told to go in ``size_field`` (``size`` in a request body, ``--size`` on a command line)."""
    if value in SIZES:
        return (f"{value!r} is a size, not a suite: give it as {size_field} ({' or '.join(SIZES)}); "
                f"suites are {', '.join(suite_names())}")
    if value not in suite_names():
        return f"unknown suite {value!r}; choose from {', '.join(suite_names())}"
    return None


def suite_of(name: str) -> str:
    """The suite of a workload name: its family prefix when it has one, else ``core``."""
    prefix, colon, _ = name.partition(":")
    return prefix if colon and prefix in family_prefixes() else CORE


def in_suite(name: str, suite: str) -> bool:
    return suite == ALL or suite_of(name) == suite


def suite_workloads(suite: str) -> list[str]:
    """The workloads a suite name stands for in a run request: core's catalog, a family's listed
    models without options (as ``python -m runner list --family``), or both for ``all``; ``dist``
    stands for its models' distributed cases (every wrapper, order and checkpointing), and ``all``
    leaves them out."""
    if suite == DISTRIBUTED:
        return sorted(e.name for e in family_entries().values() if suite_of(e.name) == DISTRIBUTED and is_distributed(e.name))
    core = [e.name for e in suite_entries()] if suite in (CORE, ALL) else []
    models = sorted(e.name for e in family_entries().values()
                    if OPTION_MARK not in e.name and in_suite(e.name, suite) and suite_of(e.name) != DISTRIBUTED)
    return core + models


def is_distributed(name: str) -> bool:
    """Whether a workload name asks for a distributed training step (``@train+ddp``, ``@train+fsdp``)."""
    model = family_model(name)
    return model is not None and any(option in DISTRIBUTED_OPTIONS for option in model.options)


def expand_suites(names: list[str]) -> list[str]:
    """Workload names with each suite name (``hf``, ``core``, ``all``, ...) replaced by its
    workloads, in order, each name once."""
    suites = set(suite_names())
    return list(dict.fromkeys(w for name in names for w in (suite_workloads(name) if name in suites else [name])))


@dataclass(frozen=True)
class FamilyModel:
    """What a family name says: ``hf:BertForMaskedLM@train+batch`` -> hf, BertForMaskedLM, (train, batch)."""

    family: str
    model: str
    options: tuple[str, ...]

    @property
    def kind(self) -> str:
        if self.family == "hf" and "/" in self.model:  # an LLM by its hub name, built from its published config
            return "LLM (published config)"
        return MODEL_KINDS.get(self.family, f"{self.family} model")


def family_model(name: str) -> FamilyModel | None:
    """The family, model and options of a family name; None for a core workload."""
    if suite_of(name) == CORE:
        return None
    family, _, rest = name.partition(":")
    model, _, options = rest.partition(OPTION_MARK)
    return FamilyModel(family=family, model=model, options=tuple(o for o in options.split(OPTION_JOIN) if o))
