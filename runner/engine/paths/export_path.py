"""``export``: ``torch.export.export`` (non-strict; strict only where unbacked dims need it,
``export_shapes``), then the exported program's module compiled by ``torch.compile`` and run.

The workload's call (a function over its modules) is wrapped in a module that owns those modules,
so their parameters are the exported program's parameters, not constants.
"""
from __future__ import annotations

import torch

from contract.spec import CaseSpec
from runner.engine.paths import Deployed, Stopwatch
from runner.engine.paths.export_shapes import export_shapes, unbacked_symbol_count
from runner.engine.prepare import compile_kwargs, compiled_caller, mark_dynamic_dims, runnable, without_grad


class CallModule(torch.nn.Module):
    """``fn(*inputs)`` as a module whose submodules are the workload's modules."""

    def __init__(self, fn, modules):
        super().__init__()
        self.fn = fn
        self.parts = torch.nn.ModuleList(modules)

    def forward(self, *inputs):
        return self.fn(*inputs)


def exported(spec: CaseSpec, instance, inputs: tuple, dynamic_dims, watch: Stopwatch):
    """(ExportedProgram, facts): the call exported with the regime's dynamic dims, timed as ``export_s``."""
    shapes = export_shapes(spec.shape_regime, dynamic_dims, instance.input_names)
    # Exported under no_grad rather than with no_grad inside the call: a grad-mode switch inside
    # the exported graph is a higher-order op (wrap_with_set_grad_enabled) torch.compile breaks on.
    module = CallModule(runnable(instance.fn, spec, grad_mode=False), instance.modules)
    with watch.phase("export_s"), torch.no_grad():
        # forward(*inputs): the inputs are one tuple argument, and so are their shapes
        dynamic = (shapes.dynamic_shapes,) if shapes.dynamic_shapes is not None else None
        program = torch.export.export(module, tuple(inputs), dynamic_shapes=dynamic, strict=shapes.strict)
    guards = getattr(program, "_guards_code", None)
    facts = {
        "path": spec.compile_mode,
        "dynamic_shapes": shapes.how,
        "strict": shapes.strict,
        "unbacked_symbols": unbacked_symbol_count(program),
        "export_guards": len(guards) if guards is not None else None,
        "range_constraints": len(program.range_constraints),
        "torch": torch.__version__,
    }
    return program, facts


def deploy(spec: CaseSpec, instance, inputs: tuple, dynamic_dims) -> Deployed:
    watch = Stopwatch(spec.device)
    program, facts = exported(spec, instance, inputs, dynamic_dims, watch)
    # export clears the inputs' dynamic marks: marked again for torch.compile of its module
    mark_dynamic_dims(inputs, instance.input_names, dynamic_dims, spec.shape_regime)
    compiled = torch.compile(program.module(), **compile_kwargs(spec))
    return Deployed(without_grad(compiled_caller(compiled, spec)), phases=watch.phases, facts=facts, fixed_shapes=spec.shape_regime == "static")
