"""The family provider API: a family lists its models; each is built by a factory with arguments.

    class MyFamily(Family):
        prefix = "my"
        description = "..."
        def models(self): return [FamilyModel("net", factory=MyWorkload, args={"width": 64})]
        def missing(self, model): return ""          # or why the installed packages cannot build it
    register_family(MyFamily())

``workloads.registry.get_workload("my:net")`` then calls ``MyWorkload(name="my:net", train=False,
axes=(), step="", width=64)`` (``step``: ``train_step``, ``prefill`` or ``decode`` when the name
asks for one: workloads/names.py). ``models()`` imports no model library: it is the family's fixed list (what
``python -m runner list --family`` prints); ``missing(model)`` checks the installed packages.
"""
from __future__ import annotations

import abc
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from workloads.base import DynamicDim, Workload
from workloads.names import DECODE, PREFILL, TRAIN_STEP


@dataclass(frozen=True)
class FamilyModel:
    name: str  # the family's own name for it: "BertForMaskedLM"
    factory: Callable[..., Workload]  # factory(name=, train=, axes=, step=, **args) -> Workload
    args: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""  # how it is built when that differs from the family's rule (an alias, a config change)


class Family(abc.ABC):
    prefix: str = ""  # "hf": names are "hf:<model>"
    description: str = ""

    @abc.abstractmethod
    def models(self) -> list[FamilyModel]:
        """Every model the family lists, in its order, whether or not this host can build it."""

    @abc.abstractmethod
    def missing(self, model: FamilyModel) -> str:
        """Why this host cannot build ``model`` ("" when it can): a package absent, a class absent."""

    def find(self, model_name: str) -> FamilyModel | None:
        return next((m for m in self.models() if m.name == model_name), None)


def import_problem(module: str) -> tuple[Any, str]:
    """``(module, "")``, or ``(None, why)`` when it does not import (absent, or broken against this torch)."""
    try:
        return importlib.import_module(module), ""
    except Exception as exc:  # noqa: BLE001 (ImportError, or a wheel built for another torch)
        return None, f"{module} does not import here ({type(exc).__name__}: {str(exc)[:160]})"


class FamilyWorkload(Workload):
    """A family's model as a workload: ``axes`` picks the dynamic dims (empty: all of them)."""

    dim_axes: Mapping[DynamicDim, str] = {}  # each declared dim's axis: "batch" or "sequence"

    def __init__(self, *, name: str, train: bool, axes: tuple[str, ...], dims: Mapping[DynamicDim, str], step: str = ""):
        if step in (PREFILL, DECODE):
            raise ValueError(f"{step} is an LLM's step; {name.partition('@')[0]} is no LLM")
        # train_step: forward, loss, backward and the optimizer's step in one compiled function
        self.whole_step = step == TRAIN_STEP
        train = train or self.whole_step
        unknown = [axis for axis in axes if axis not in dims.values()]
        if unknown:
            raise ValueError(f"{name}: no dynamic dim on axis {', '.join(unknown)} (axes: {', '.join(sorted(set(dims.values())))})")
        self.name = name
        self.family = self.category = name.partition(":")[0]
        self.phase = "train" if train else "infer"
        self.train = train
        self.axes = tuple(axes) or tuple(sorted(set(dims.values())))
        self.dim_axes = {dim: axis for dim, axis in dims.items() if axis in self.axes}
        self.dynamic_dims = tuple(DynamicDim(dim.input, dim.dim, axis, hint=dim.hint) for dim, axis in self.dim_axes.items())
        # Training steps run as users train (AMP); inference in bfloat16 first, as the harness runs it.
        self.dtypes = ("amp", "float32") if train else ("bfloat16", "float32", "float16")

    @property
    def step_text(self) -> str:
        """What a call runs, for the description."""
        if self.whole_step:
            return "AMP whole training step (forward, loss, backward and AdamW in one compiled function)"
        return "AMP training step" if self.train else "inference"

    def varies(self, axis: str) -> bool:
        """Whether the variant-1 inputs change ``axis`` (only the axes this workload marks dynamic)."""
        return axis in self.axes
