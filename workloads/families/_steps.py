"""What the families share: the second shape, seeded inputs, the inference call and the training step.

Nothing here builds a model; each family's module does, with its library's own constructors.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from workloads.base import Instance
from workloads.suite._common import freeze

TINY_BATCH = 2


def second_size(size: int) -> int:
    """The variant-1 size of a dynamic dim: half (at least 2), or 2 more below 4 (never 0 or 1)."""
    return size // 2 if size >= 4 else size + 2


def seeded_model(make: Callable[[], torch.nn.Module], *, device, dtype: torch.dtype, seed: int, train: bool) -> torch.nn.Module:
    """``make()`` with seeded random weights on ``device`` in ``dtype``: frozen for inference,
    in train mode with gradients for a training step."""
    torch.manual_seed(seed)
    with torch.device(device):
        model = make().to(device=device, dtype=dtype)
    if train:
        return model.train()
    return freeze(model)


def tensors_of(output: Any) -> tuple[torch.Tensor, ...]:
    """The tensors a model returned (a ``ModelOutput``'s fields, a namedtuple's, a plain tensor)."""
    if isinstance(output, torch.Tensor):
        return (output,)
    if hasattr(output, "to_tuple"):
        output = output.to_tuple()
    if isinstance(output, (tuple, list)):
        return tuple(t for item in output for t in tensors_of(item))
    return ()


def adamw(params: Sequence[torch.nn.Parameter], device) -> tuple[torch.optim.Optimizer, str]:
    """AdamW over ``params``, fused where this build and device offer it, else foreach; and which."""
    try:
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, fused=True), "fused"
    except (RuntimeError, ValueError):  # no fused kernel for this device or dtype in this build
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, foreach=True), "foreach"


def whole_step_instance(model: torch.nn.Module, make_inputs: Callable[[int], Sequence[torch.Tensor]], names: Sequence[str], *,
                        loss: Callable[[Any, dict], torch.Tensor], implementation: str, device) -> Instance:
    """The whole training step (``@train_step``): gradients cleared, forward, loss, backward and the
    AdamW step in the one function that is compiled; returns the loss and every gradient (of the
    step just taken, before its update). The optimizer lives in the instance, so each instance's
    first call starts from the same weights; the step changes them, so there is no ``rebind``
    (the compiled side is a second seeded build)."""
    names = tuple(names)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer, kind = adamw(params, device)

    def train_step(*tensors):
        optimizer.zero_grad(set_to_none=True)
        kwargs = dict(zip(names, tensors))
        value = loss(model(**kwargs), kwargs)
        value.backward()
        optimizer.step()
        return value.detach(), tuple([p.grad for p in params])

    return Instance(fn=train_step, make_inputs=make_inputs, input_names=names, modules=(model,),
                    implementation=f"{implementation} + torch.optim.AdamW({kind})", loss=loss)


def instance(model: torch.nn.Module, make_inputs: Callable[[int], Sequence[torch.Tensor]], names: Sequence[str], *,
             loss: Callable[[Any, dict], torch.Tensor] | None, implementation: str, whole_step: bool = False,
             device=None) -> Instance:
    """The Instance: inference returns the model's output tensors; a training step (``loss`` given)
    clears the gradients, runs forward and backward and returns the loss and every gradient. Dynamo
    does not trace ``loss.backward()``: the step breaks its graph there (one break), and the
    backward of the compiled forward is AOTAutograd's."""
    if whole_step:
        return whole_step_instance(model, make_inputs, names, loss=loss, implementation=implementation, device=device)
    names = tuple(names)

    def step_over(models: Sequence[torch.nn.Module]) -> Callable[..., Any]:
        [net] = models
        params = [p for p in net.parameters() if p.requires_grad]

        def infer(*tensors):
            return tensors_of(net(**dict(zip(names, tensors))))

        def train_step(*tensors):
            for p in params:
                p.grad = None
            kwargs = dict(zip(names, tensors))
            value = loss(net(**kwargs), kwargs)
            value.backward()
            return value.detach(), tuple([p.grad for p in params])  # a list: Dynamo breaks the graph on a generator

        return infer if loss is None else train_step

    # Neither step changes the weights (no optimizer step), so ``rebind`` may copy them after a call.
    return Instance(fn=step_over((model,)), make_inputs=make_inputs, input_names=names, modules=(model,),
                    implementation=implementation, loss=loss, rebind=step_over)
