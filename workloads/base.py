"""What a workload is. Pure PyTorch: no Django, no Celery, no runner imports.

A workload builds, at a named size, a function to compile and the inputs to call it with. The
measurement engine (``runner.engine``) calls ``build`` twice with the same seed (one instance stays
eager, one is compiled) so that training steps, which mutate their own weights, start from identical
state and can be compared for accuracy; an instance with ``rebind`` is copied instead.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

import torch

Size = Literal["tiny", "full"]
Parallel = Literal["ddp", "fsdp"]
Phase = Literal["infer", "train"]
SIZES: tuple[Size, ...] = ("tiny", "full")


@dataclass(frozen=True)
class DynamicDim:
    """Dimension ``dim`` of the input named ``input`` varies between calls (batch, sequence, ...)."""

    input: str
    dim: int
    # What it is (``batch``, ``sequence``, ...): a configuration's ``dims`` names dims by role
    # (contract.dims). Not part of equality, so ``DynamicDim("x", 0)`` still names the same dim.
    role: str = field(default="", compare=False)
    # Marked unbacked with its size as the hint (``hint_override``) where the build takes one, as
    # vLLM marks its token dim; a backed mark ignores it.
    hint: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.input}:{self.dim}"


@dataclass(frozen=True)
class Distributed:
    """How a training step runs across ranks (docs/distributed.md): under DDP or FSDP, the model
    wrapped then compiled (``compile_first`` False, the recommended order) or compiled then wrapped,
    with or without activation checkpointing of its blocks."""

    parallel: Parallel
    compile_first: bool = False
    checkpoint: bool = False

    @property
    def order(self) -> str:
        return "compile-then-wrap" if self.compile_first else "wrap-then-compile"


@dataclass
class Instance:
    """One built workload: ``fn(*make_inputs(variant))`` is the call that is timed.

    ``variant=0`` gives the inputs that are timed; ``variant=1`` gives inputs that differ only in
    the workload's dynamic dimensions (the engine feeds them to count recompiles). ``fn`` returns a
    tensor or a (nested) tuple/list/dict of tensors; for a training step it returns the loss and
    whatever else is worth comparing against eager.
    """

    fn: Callable[..., Any]
    make_inputs: Callable[[int], Sequence[torch.Tensor]]
    input_names: Sequence[str]
    # Tolerances for comparing compiled against eager output, per dtype family; a workload that
    # is numerically touchy (long reductions, training steps) may loosen them.
    rtol: float | None = None
    atol: float | None = None
    modules: Sequence[torch.nn.Module] = field(default_factory=tuple)
    # Which code built the model: "torchvision.models.resnet18" on a GPU box that has torchvision,
    # "workloads.suite.resnet" where it falls back to our own module. Recorded with each result.
    implementation: str = ""
    # The training loss from ``modules[0]``'s output and the named inputs: what a distributed case
    # (runner.engine.distributed) differentiates around its wrapped model. None: not trainable there.
    loss: Callable[[Any, dict], torch.Tensor] | None = None
    # ``fn`` over other modules (copies of ``modules``, in their order): the engine's compiled side
    # runs ``rebind(copies)`` and its float64 reference ``rebind(float64 copies)`` instead of
    # building the workload again (docs/families.md, "Cost"). Only for an ``fn`` whose calls leave
    # the weights as built (no optimizer step). None: the engine builds again, with the same seed.
    rebind: Callable[[Sequence[torch.nn.Module]], Callable[..., Any]] | None = None


class Workload(abc.ABC):
    """Subclass, set the class attributes, implement ``build``, and register in ``workloads.registry``."""

    name: str = ""
    category: str = ""  # the class of workload users recognise: "vision-train", "llm-decode", ...
    phase: Phase = "infer"
    description: str = ""
    dynamic_dims: tuple[DynamicDim, ...] = ()
    # dtypes this workload supports; the first is its default.
    dtypes: tuple[str, ...] = ("float32",)
    # Set (on the instance) when the name asks for a distributed training step (``@train+ddp``).
    distributed: Distributed | None = None

    @abc.abstractmethod
    def build(self, *, size: Size, device: str, dtype: torch.dtype, seed: int = 0) -> Instance:
        """Construct the model with random weights (``torch.manual_seed(seed)``) and its inputs."""

    def describe(self) -> dict:
        """The workload's entry in a run document's ``workloads`` list."""
        return {
            "name": self.name,
            "category": self.category,
            "phase": self.phase,
            "dynamic_dims": [str(d) for d in self.dynamic_dims],
            "description": self.description,
        }
