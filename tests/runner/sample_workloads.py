"""Small, healthy workloads for the runner's tests (loaded as ``tests.runner.sample_workloads:Class``)."""
from __future__ import annotations

import dataclasses

import torch

from workloads.base import DynamicDim, Instance, Workload
from workloads.families._steps import instance as family_instance


class TinyMLP(Workload):
    """Two linear layers; the batch dimension is dynamic."""

    name = "test_tiny_mlp"
    category = "test"
    phase = "infer"
    description = "two linear layers (runner tests)"
    dynamic_dims = (DynamicDim("x", 0),)
    dtypes = ("float32", "bfloat16")

    def build(self, *, size, device, dtype, seed=0):
        torch.manual_seed(seed)
        width = 32 if size == "tiny" else 1024
        model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, 8)).to(device, dtype)

        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(100 + variant)
            batch = 16 if variant == 0 else 24
            return (torch.randn(batch, width, generator=generator).to(device, dtype),)

        @torch.no_grad()
        def fn(x):
            return model(x)

        return Instance(fn=fn, make_inputs=make_inputs, input_names=("x",), modules=(model,), implementation="tests.runner.sample_workloads")


class TwoGraphBreaks(Workload):
    """Exactly two explicit graph breaks (three graphs); the row dimension is dynamic."""

    name = "test_two_graph_breaks"
    category = "test"
    phase = "infer"
    description = "two torch._dynamo.graph_break() calls (runner tests)"
    dynamic_dims = (DynamicDim("x", 0),)

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(7 + variant)
            return (torch.randn(8 if variant == 0 else 12, 4, generator=generator).to(device, dtype),)

        return Instance(fn=two_breaks, make_inputs=make_inputs, input_names=("x",))


def two_breaks(x):
    y = torch.sin(x) * 2
    torch._dynamo.graph_break()
    y = torch.cos(y) + 1
    torch._dynamo.graph_break()
    return y.sum(dim=1)


class TrainStep(Workload):
    """A whole training step (forward, backward, SGD step) that mutates its own weights."""

    name = "test_train_step"
    category = "test"
    phase = "train"
    description = "linear regression training step (runner tests)"
    dynamic_dims = (DynamicDim("x", 0), DynamicDim("y", 0))

    def build(self, *, size, device, dtype, seed=0):
        torch.manual_seed(seed)
        model = torch.nn.Linear(16, 1).to(device, dtype)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(3 + variant)
            rows = 32 if variant == 0 else 48
            return (torch.randn(rows, 16, generator=generator).to(device, dtype), torch.randn(rows, 1, generator=generator).to(device, dtype))

        def step(x, y):
            optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.detach(), model.weight.detach().clone()

        return Instance(fn=step, make_inputs=make_inputs, input_names=("x", "y"), modules=(model,), rtol=1e-3, atol=1e-4)


class RoundingChain(Workload):
    """Eager rounds to bfloat16 twenty times; compiled (by design) computes in float32 and rounds
    once. The two differ beyond the tight tolerance, but compiled is the closer to float64."""

    name = "test_rounding_chain"
    category = "test"
    phase = "infer"
    description = "bfloat16 rounding chain (runner tests)"
    dtypes = ("bfloat16", "float64")

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(11 + variant)
            return (torch.rand(64, generator=generator).add(1.0).to(device, dtype),)

        return Instance(fn=rounding_chain, make_inputs=make_inputs, input_names=("x",), rtol=1e-3, atol=1e-3)


def rounding_chain(x):
    if torch.compiler.is_compiling():
        return (x.float() * 1.01**20).to(x.dtype)
    for _ in range(20):
        x = x * 1.01
    return x


class ScaledRoundingChain(Workload):
    """The rounding chain over a module's weights, built as the families build (``_steps.instance``,
    with ``rebind``): the float64 reference is the eager module upcast. ``builds`` counts builds."""

    name = "test_scaled_rounding_chain"
    category = "test"
    phase = "infer"
    description = "bfloat16 rounding chain over random weights, family-style instance (runner tests)"
    dtypes = ("bfloat16", "float64")
    builds = 0

    def build(self, *, size, device, dtype, seed=0):
        type(self).builds += 1
        torch.manual_seed(seed)
        model = ScaleChain(torch.rand(64, dtype=torch.float64).mul(0.02).add(1.0)).to(device, dtype)

        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(11 + variant)
            return (torch.rand(64, generator=generator).add(1.0).to(device, dtype),)

        built = family_instance(model, make_inputs, ("x",), loss=None, implementation="tests.runner.sample_workloads")
        return dataclasses.replace(built, rtol=1e-3, atol=1e-3)


class ScaleChain(torch.nn.Module):
    def __init__(self, scale: torch.Tensor):
        super().__init__()
        self.scale = torch.nn.Parameter(scale, requires_grad=False)

    def forward(self, x):
        if torch.compiler.is_compiling():
            return (x.float() * self.scale.float() ** 20).to(x.dtype)
        for _ in range(20):
            x = x * self.scale
        return x


class DataDependentBranch(Workload):
    """One data-dependent ``if`` (dynamo records it under counters["unimplemented"]) and one .item()."""

    name = "test_data_dependent_branch"
    category = "test"
    phase = "infer"
    description = "a tensor-valued if and a Tensor.item() call (runner tests)"
    dynamic_dims = (DynamicDim("x", 0),)

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(11 + variant)
            return (torch.rand(8 if variant == 0 else 12, 4, generator=generator).to(device, dtype),)

        return Instance(fn=branch_and_item, make_inputs=make_inputs, input_names=("x",))


def branch_and_item(x):
    y = x * 2
    if y.sum() > 0:  # always true for rand inputs: a data-dependent branch
        y = y + 1
    offset = y.mean().item()
    return y - offset


class ScalarItem(Workload):
    """One ``Tensor.item()`` feeding arithmetic: a graph break, unless dynamo captures scalar outputs
    (``dynamo.capture_scalar_outputs=True`` or ``TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1``)."""

    name = "test_scalar_item"
    category = "test"
    phase = "infer"
    description = "a Tensor.item() used in arithmetic (build-variant tests)"

    def build(self, *, size, device, dtype, seed=0):
        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(5 + variant)
            return (torch.rand(8, 4, generator=generator).to(device, dtype),)

        return Instance(fn=subtract_mean_item, make_inputs=make_inputs, input_names=("x",))


def subtract_mean_item(x):
    y = x * 2
    return y - y.mean().item()


class BatchAndSequence(Workload):
    """A token mixer over (batch, sequence, width): the batch and the sequence dims are both
    declared dynamic, each with its role; variant 1 changes both."""

    name = "test_batch_and_sequence"
    category = "test"
    phase = "infer"
    description = "a linear layer over (batch, sequence, width) with both dims declared (runner tests)"
    dynamic_dims = (DynamicDim("x", 0, "batch"), DynamicDim("x", 1, "sequence"))

    def build(self, *, size, device, dtype, seed=0):
        torch.manual_seed(seed)
        model = torch.nn.Linear(8, 8).to(device, dtype)

        def make_inputs(variant: int):
            generator = torch.Generator().manual_seed(5 + variant)
            return (torch.randn(4 if variant == 0 else 6, 10 if variant == 0 else 12, 8, generator=generator).to(device, dtype),)

        @torch.no_grad()
        def fn(x):
            return model(x).softmax(dim=1)

        return Instance(fn=fn, make_inputs=make_inputs, input_names=("x",), modules=(model,), implementation="tests.runner.sample_workloads")
