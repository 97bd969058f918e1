"""How a case makes its workload's instances: a seeded build, or a copy of one (docs/families.md, "Cost")."""
from __future__ import annotations

import copy
import dataclasses

import torch

from contract.spec import CaseSpec
from runner.engine.prepare import build_dtype
from workloads.base import Instance


def build_instance(workload, spec: CaseSpec) -> Instance:
    """The workload built at the case's size, device and dtype, random weights from the case's seed."""
    torch.manual_seed(spec.seed)
    return workload.build(size=spec.size, device=spec.device, dtype=build_dtype(spec.dtype), seed=spec.seed)


def copied_instance(instance: Instance, dtype: torch.dtype | None = None) -> Instance:
    """A second instance of ``instance``'s weights: its step rebound to deep copies of its modules
    (tied weights stay tied), cast to ``dtype`` if given (the float64 reference). Only for an
    instance with ``rebind``: its step leaves the weights as built, so a copy made after the eager
    call equals a second build with the same seed."""
    copies = tuple(copy.deepcopy(module) if dtype is None else copy.deepcopy(module).to(dtype) for module in instance.modules)
    return dataclasses.replace(instance, fn=instance.rebind(copies), modules=copies)


def second_instance(workload, spec: CaseSpec, first: Instance | None) -> tuple[Instance, str]:
    """(the compiled side's instance, how it was made): a copy of ``first`` where its ``rebind``
    allows and its modules deep-copy, else a second seeded build."""
    if first is not None and first.rebind is not None:
        try:
            return copied_instance(first), "copied from eager"
        except Exception:  # noqa: BLE001 (a module that does not deep-copy is built, as before)
            pass
    return build_instance(workload, spec), "built"
