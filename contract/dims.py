"""Which of a workload's dynamic dims a regime marks (docs/case-config.md, "Which dims").

A workload declares its dynamic dims (``input_name:dim``), each with a role: ``batch``,
``sequence`` (or another word). A configuration's ``dims`` names dims by role (``batch``: every
dim whose role is batch) or by name (``input_ids:1``), as PyTorch's harness says
``--dynamic-batch-only`` / ``--unbacked-batch-only``. ``None``: every declared dim (the default).

Pure Python: the runner selects ``workloads.base.DynamicDim`` objects with it, the planner a
catalog entry's names and roles.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

FIELD = "dims"


class DimsError(ValueError):
    """A ``dims`` list that cannot be read: ``field`` is always ``dims``."""

    field = FIELD


def parse(value: object) -> tuple[str, ...] | None:
    """``"batch,sequence"`` or ``["batch"]`` as a tuple of names in order, duplicates dropped;
    ``None`` or ``""`` gives None (every dim). Anything else raises ``DimsError``."""
    if value is None or value == "":
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise DimsError(f"expected a comma-separated string or a list of dim roles or names, got {type(value).__name__}")
    names: list[str] = []
    for item in items:
        name = item.strip() if isinstance(item, str) else item
        if not isinstance(name, str) or not name or not name.isprintable() or any(c in name for c in "/,= "):
            raise DimsError(f"{item!r} is not a dim role (batch, sequence) or input_name:dim")
        if name not in names:
            names.append(name)
    return tuple(names) if names else None


@dataclass(frozen=True)
class Selection:
    marked: tuple[int, ...]  # positions, in the declared order, of the dims the regime marks
    unmatched: tuple[str, ...]  # requested names that match no declared dim


def matches(wanted: str, *, name: str, role: str) -> bool:
    """A requested name matches a dim by its ``input_name:dim`` (it has a colon) or by its role."""
    return wanted == name if ":" in wanted else wanted == role


def select(declared: Sequence[tuple[str, str]], wanted: Sequence[str] | None) -> Selection:
    """``declared``: (name, role) of each dynamic dim; ``wanted``: the configuration's dims."""
    if wanted is None:
        return Selection(marked=tuple(range(len(declared))), unmatched=())
    marked = tuple(i for i, (name, role) in enumerate(declared) if any(matches(w, name=name, role=role) for w in wanted))
    unmatched = tuple(w for w in wanted if not any(matches(w, name=name, role=role) for name, role in declared))
    return Selection(marked=marked, unmatched=unmatched)


def describe(declared: Sequence[tuple[str, str]]) -> str:
    """``input_ids:0 (batch), input_ids:1 (sequence)`` for skip reasons."""
    return ", ".join(f"{name} ({role})" if role else name for name, role in declared) or "none"


def skip_reason(workload_name: str, declared: Sequence[tuple[str, str]], wanted: Sequence[str] | None) -> tuple[tuple[str, ...] | None, str]:
    """(the dims the case's configuration carries, a stated reason for what is left out or "").

    Requested names the workload does not declare are left out with a reason; when none is left,
    the dims are ``()`` and the case is not planned."""
    if wanted is None:
        return None, ""
    selection = select(declared, wanted)
    kept = tuple(w for w in wanted if w not in selection.unmatched)
    if not selection.unmatched:
        return kept, ""
    missing = ", ".join(selection.unmatched)
    if not kept:
        return (), f"{workload_name}: dims {missing}: declares no such dynamic dim (declares {describe(declared)})"
    return kept, f"{workload_name}: dims {missing} skipped: declares no such dynamic dim (declares {describe(declared)}); marks {', '.join(kept)} only"


def declared(workload) -> tuple[tuple[str, str], ...]:
    """(name, role) of each dynamic dim a workload declares: a runner ``Workload``'s
    ``DynamicDim`` carries its role; a ``contract.catalog.Entry`` has names and ``dim_roles``."""
    roles = getattr(workload, "dim_roles", None)
    if roles is not None:
        return tuple((str(name), role) for name, role in zip(workload.dynamic_dims, tuple(roles) + ("",) * len(workload.dynamic_dims)))
    return tuple((str(d), getattr(d, "role", "")) for d in workload.dynamic_dims)
