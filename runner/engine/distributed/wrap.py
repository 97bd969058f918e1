"""The model of a distributed case as a rank runs it: checkpointed, wrapped, compiled, in an order.

- ``checkpoint``: each block (a child of an ``nn.ModuleList``; without one, each direct child that
  has parameters) runs under non-reentrant activation checkpointing (``checkpoint_wrapper``).
- DDP: ``DistributedDataParallel`` with its defaults (gradients averaged over the ranks; no search
  for unused parameters, which costs a graph walk each step: a model whose loss leaves a parameter
  unused fails the case at its second step, with DDP's message).
- FSDP: FSDP2's ``fully_shard`` on each block, then on the root (parameters sharded as DTensors,
  gradients reduce-scattered); a torch without ``fully_shard`` fails the case naming it.
- order: wrap-then-compile is ``torch.compile(wrapped)`` (the order PyTorch recommends: DDP's
  optimizer splits the graph at its buckets, FSDP2's collectives are traced); compile-then-wrap is
  ``wrap(torch.compile(model))``, the order that leaves the wrapper's hooks and collectives outside
  (or breaking) the compiled graph. docs/distributed.md.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import torch
from torch import nn

# Prefixes that wrappers add to parameter names: removed, so that every side names a gradient alike.
_WRAPPER_PARTS = re.compile(r"(?:^|\.)(?:module|_orig_mod|_checkpoint_wrapped_module|_fsdp_wrapped_module)(?=\.)")


def fully_shard_api() -> Callable[..., Any] | None:
    """FSDP2's ``fully_shard`` (torch.distributed.fsdp from 2.6, the _composable path before), or None."""
    try:
        from torch.distributed.fsdp import fully_shard
        return fully_shard
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard
        return fully_shard
    except ImportError:
        return None


def blocks_of(model: nn.Module) -> list[nn.Module]:
    """The units to shard and checkpoint: the children of every ``nn.ModuleList``, else the direct
    children that hold parameters of the model, or of its only such child (a wrapper's model)."""
    listed = [child for module in model.modules() if isinstance(module, nn.ModuleList) for child in module]
    if listed:
        return listed
    children = [child for child in model.children() if any(True for _ in child.parameters())]
    if len(children) == 1 and any(True for _ in children[0].children()):
        return blocks_of(children[0])
    return children


def checkpoint_blocks(model: nn.Module) -> int:
    """Wrap each block in non-reentrant activation checkpointing, in place; how many were wrapped."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, apply_activation_checkpointing

    targets = {id(block) for block in blocks_of(model)}
    apply_activation_checkpointing(model, check_fn=lambda module: id(module) in targets,
                                   checkpoint_wrapper_fn=_non_reentrant(CheckpointImpl))
    return len(targets)


def _non_reentrant(impl):
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    return lambda module: checkpoint_wrapper(module, checkpoint_impl=impl.NO_REENTRANT)


def wrap(model: nn.Module, parallel: str, device: str) -> nn.Module:
    """``model`` under DDP or FSDP2 (in place for FSDP)."""
    if parallel == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        device_ids = [torch.cuda.current_device()] if device == "cuda" else None
        return DistributedDataParallel(model, device_ids=device_ids)
    fully_shard = fully_shard_api()
    if fully_shard is None:
        raise RuntimeError(f"FSDP2's fully_shard is missing from torch {torch.__version__}: fsdp cases need it")
    inner = model._orig_mod if hasattr(model, "_orig_mod") else model  # compile-then-wrap: shard the model's blocks
    for block in blocks_of(inner):
        fully_shard(block)
    fully_shard(model)
    return model


def prepare(model: nn.Module, *, parallel: str, compile_first: bool, checkpoint: bool, device: str,
            compile: Callable[[nn.Module], nn.Module] | None) -> nn.Module:
    """The module a rank calls: checkpointed, then wrapped and compiled in the case's order
    (``compile`` None: eager, wrapped only)."""
    if checkpoint:
        checkpoint_blocks(model)
    if compile is None:
        return wrap(model, parallel, device)
    if compile_first:
        return wrap(compile(model), parallel, device)
    return compile(wrap(model, parallel, device))


def plain_name(name: str) -> str:
    """A parameter's name without the wrappers' parts: ``module._orig_mod.blocks.0.w`` -> ``blocks.0.w``."""
    while True:
        shorter = _WRAPPER_PARTS.sub("", name).lstrip(".")
        if shorter == name:
            return name
        name = shorter


def full_gradients(model: nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter's whole gradient by plain name, on the host (a collective under FSDP: each
    rank must call it at the same point). A parameter without a gradient maps to an empty tensor."""
    gradients = {}
    for name, parameter in model.named_parameters():
        grad = parameter.grad
        if grad is not None and hasattr(grad, "full_tensor"):
            grad = grad.full_tensor()
        gradients[plain_name(name)] = grad.detach().float().cpu() if grad is not None else torch.empty(0)
    return dict(sorted(gradients.items()))


def clear_gradients(model: nn.Module) -> None:
    for parameter in model.parameters():
        parameter.grad = None
