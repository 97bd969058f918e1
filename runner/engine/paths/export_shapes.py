"""How a case's dynamic dims reach ``torch.export.export``, per shape regime and per torch build.

- static: no dynamic shapes;
- backed: ``Dim.DYNAMIC`` on each dynamic dim (export fails where the model specializes it, which
  a user asking for a dynamic dim needs to know), non-strict;
- unbacked: whatever the build offers, first found: ``Dim.UNBACKED`` (newer builds' shape specs),
  then ``mark_unbacked`` on the inputs where non-strict export honours it, else ``mark_unbacked``
  under strict export (torch 2.11 to 2.13: non-strict export ignores the mark). Which one was used
  is recorded with the result (``environment.compile_path.dynamic_shapes``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from runner.engine import compat


@dataclass(frozen=True)
class ExportShapes:
    dynamic_shapes: tuple | None  # one {dim: hint} (or None) per input, or None
    strict: bool
    how: str  # what was used, for the result's environment


def _spec(hint: Any, dims: Sequence, input_names: Sequence[str]) -> tuple:
    per_input: list[dict | None] = [None] * len(input_names)
    positions = {name: index for index, name in enumerate(input_names)}
    for dim in dims:
        per_input[positions[dim.input]] = {**(per_input[positions[dim.input]] or {}), dim.dim: hint}
    return tuple(per_input)


@functools.cache
def non_strict_honours_mark_unbacked() -> bool:
    """Export a one-op module non-strict with an input dim marked unbacked: is the dim unbacked?"""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    x = torch.ones(3)
    compat.mark_unbacked()(x, 0)
    try:
        program = torch.export.export(Double(), (x,), strict=False)
    except Exception:  # noqa: BLE001 (a build that refuses the mark does not honour it)
        return False
    placeholder = next(n for n in program.graph.nodes if n.op == "placeholder")
    return bool(free_unbacked_symbols(placeholder.meta["val"]))


def export_shapes(regime: str, dynamic_dims: Sequence, input_names: Sequence[str]) -> ExportShapes:
    if regime == "static" or not dynamic_dims:
        return ExportShapes(None, strict=False, how="static")
    if regime == "backed":
        return ExportShapes(_spec(compat.export_dim_hint("DYNAMIC"), dynamic_dims, input_names), strict=False, how="Dim.DYNAMIC")
    unbacked = compat.export_dim_hint("UNBACKED")
    if unbacked is not None:
        return ExportShapes(_spec(unbacked, dynamic_dims, input_names), strict=False, how="Dim.UNBACKED")
    # The inputs carry mark_unbacked already (runner.engine.prepare.mark_dynamic_dims).
    if non_strict_honours_mark_unbacked():
        return ExportShapes(None, strict=False, how="mark_unbacked (non-strict export)")
    return ExportShapes(None, strict=True, how="mark_unbacked (strict export: non-strict ignores the mark in this build)")


def unbacked_symbol_count(program) -> int | None:
    """Distinct unbacked symbols (u0, u1, ...) in the exported graph's values."""
    try:
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
        from torch.utils import _pytree as pytree
    except ImportError:
        return None
    symbols: set = set()
    for node in program.graph.nodes:
        for value in pytree.tree_leaves(node.meta.get("val")):
            if isinstance(value, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool)):
                symbols |= set(free_unbacked_symbols(value))
    return len(symbols)
