"""Compiled output against eager output: same structure, every tensor within tolerance.

Outputs are pytrees (tensors inside tuples, lists, dicts, dataclass-like objects). Both sides are
first copied to the CPU (``to_host``), which also protects the reference from CUDA-graph output
buffers that the next compiled call overwrites. Floating tensors pass when, element by element,
``|compiled - eager| <= atol + rtol * |eager|`` (``torch.allclose``'s rule) and NaNs sit in the same
places; integer and bool tensors must be equal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

import torch

# (rtol, atol) by dtype; a workload's Instance.rtol / Instance.atol override them.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-6, 1e-6),
    "float32": (1e-3, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
    "amp": (3e-2, 3e-2),
}


def tolerances(dtype: str, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    default_rtol, default_atol = DEFAULT_TOLERANCES[dtype]
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)


def to_host(tree: Any) -> Any:
    """A detached CPU copy of every tensor in ``tree``; everything else as it is."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().to("cpu", copy=True)
    if isinstance(tree, dict):
        return {key: to_host(value) for key, value in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(to_host(v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_host(v) for v in tree)
    if hasattr(tree, "__dataclass_fields__"):
        return {name: to_host(getattr(tree, name)) for name in tree.__dataclass_fields__}
    return tree


def flatten(tree: Any, path: str = "output") -> Iterator[tuple[str, Any]]:
    """(path, leaf) pairs in a stable order; dict keys are sorted so insertion order does not matter."""
    if isinstance(tree, dict):
        for key in sorted(tree, key=str):
            yield from flatten(tree[key], f"{path}[{key!r}]")
    elif isinstance(tree, (list, tuple)):
        for index, item in enumerate(tree):
            yield from flatten(item, f"{path}[{index}]")
    elif hasattr(tree, "__dataclass_fields__"):
        for name in tree.__dataclass_fields__:
            yield from flatten(getattr(tree, name), f"{path}.{name}")
    else:
        yield path, tree


@dataclass(frozen=True)
class Comparison:
    ok: bool
    max_abs_error: float | None  # None when a difference is not a finite number (NaN, inf, shape)
    max_rel_error: float | None
    problem: str = ""  # the first mismatch, for the error excerpt


def _tensor_errors(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> tuple[bool, float, float, str]:
    if actual.shape != expected.shape:
        return False, math.nan, math.nan, f"shape {tuple(actual.shape)} != eager {tuple(expected.shape)}"
    if not (expected.is_floating_point() or expected.is_complex()):
        equal = bool(torch.equal(actual.to(expected.dtype), expected))
        differing = 0 if equal else int((actual.to(expected.dtype) != expected).sum())
        return equal, 0.0 if equal else math.nan, 0.0 if equal else math.nan, "" if equal else f"{differing} elements differ"
    if actual.numel() == 0:
        return True, 0.0, 0.0, ""
    got = actual.to(torch.float64)
    want = expected.to(torch.float64)
    got_nan, want_nan = torch.isnan(got), torch.isnan(want)
    if not torch.equal(got_nan, want_nan):
        return False, math.nan, math.nan, f"NaN in {int(got_nan.sum())} compiled vs {int(want_nan.sum())} eager elements"
    got = got.masked_fill(got_nan, 0.0)
    want = want.masked_fill(want_nan, 0.0)
    got_inf, want_inf = torch.isinf(got), torch.isinf(want)
    if not torch.equal(got_inf, want_inf) or not torch.equal(got[got_inf], want[want_inf]):
        return False, math.nan, math.nan, "infinities differ"
    got = got.masked_fill(got_inf, 0.0)
    want = want.masked_fill(want_inf, 0.0)
    diff = (got - want).abs()
    max_abs = float(diff.max())
    # Relative to the reference's magnitude, floored at atol so that near-zero references do not
    # turn rounding into huge relative errors.
    max_rel = float((diff / want.abs().clamp_min(max(atol, 1e-12))).max())
    within = bool((diff <= atol + rtol * want.abs()).all())
    problem = "" if within else f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g} (rtol {rtol:g}, atol {atol:g})"
    return within, max_abs, max_rel, problem


def _scalar_errors(actual: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, float, float, str]:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool) and isinstance(actual, (int, float)):
        diff = abs(actual - expected)
        ok = diff <= atol + rtol * abs(expected)
        return ok, float(diff), float(diff / max(abs(expected), atol)), "" if ok else f"{actual!r} != eager {expected!r}"
    ok = actual == expected
    return ok, 0.0 if ok else math.nan, 0.0 if ok else math.nan, "" if ok else f"{actual!r} != eager {expected!r}"


def compare_outputs(actual: Any, expected: Any, *, rtol: float, atol: float) -> Comparison:
    """Compare two host pytrees (see ``to_host``): the compiled output against the eager reference."""
    got = list(flatten(actual))
    want = list(flatten(expected))
    got_paths = [p for p, _ in got]
    want_paths = [p for p, _ in want]
    if got_paths != want_paths:
        return Comparison(False, None, None, f"output structure differs: compiled {got_paths[:5]} vs eager {want_paths[:5]}")
    ok, max_abs, max_rel, first_problem = True, 0.0, 0.0, ""
    for (path, a), (_, e) in zip(got, want):
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            if not (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)):
                leaf = (False, math.nan, math.nan, f"{type(a).__name__} != eager {type(e).__name__}")
            else:
                leaf = _tensor_errors(a, e, rtol, atol)
        else:
            leaf = _scalar_errors(a, e, rtol, atol)
        leaf_ok, leaf_abs, leaf_rel, leaf_problem = leaf
        max_abs = max(max_abs, leaf_abs) if not math.isnan(leaf_abs) else math.nan
        max_rel = max(max_rel, leaf_rel) if not math.isnan(leaf_rel) else math.nan
        if not leaf_ok:
            ok = False
            first_problem = first_problem or f"{path}: {leaf_problem}"
    finite = lambda v: v if math.isfinite(v) else None  # noqa: E731
    return Comparison(ok, finite(max_abs), finite(max_rel), first_problem)


# Dtypes whose compiled-vs-eager differences may be rounding on both sides: a failing comparison
# is judged again against a float64 run of the same function (benchmarks/dynamo's method).
LOW_PRECISION = ("float16", "bfloat16", "amp")


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.sqrt(torch.mean((a.to(torch.float64) - b.to(torch.float64)) ** 2)))


@dataclass(frozen=True)
class Fp64Verdict:
    ok: bool
    compiled_rmse: float  # largest over output tensors, against the float64 run
    eager_rmse: float


def judge_against_fp64(actual: Any, expected: Any, fp64: Any, *, atol: float, multiplier: float = 2.0) -> Fp64Verdict:
    """Is compiled no more than ``multiplier`` times farther from float64 than eager is (per tensor)?

    ``atol / 10`` is added to the allowance so that an eager output that happens to match float64
    exactly does not demand the same of compiled. All three pytrees must share a structure.
    """
    leaves = list(zip(flatten(actual), flatten(expected), flatten(fp64)))
    ok, worst_compiled, worst_eager = True, 0.0, 0.0
    for (_, a), (_, e), (_, f) in leaves:
        if not all(isinstance(t, torch.Tensor) for t in (a, e, f)) or not f.is_floating_point() or f.numel() == 0:
            continue
        if a.shape != f.shape or e.shape != f.shape:
            return Fp64Verdict(False, math.inf, math.inf)
        compiled_rmse, eager_rmse = _rmse(a, f), _rmse(e, f)
        worst_compiled, worst_eager = max(worst_compiled, compiled_rmse), max(worst_eager, eager_rmse)
        if not compiled_rmse <= multiplier * eager_rmse + atol / 10:  # NaN fails too
            ok = False
    return Fp64Verdict(ok, worst_compiled, worst_eager)


def inputs_as_fp64(host_inputs: Any, device: str) -> tuple:
    """Host copies of the inputs on ``device``, floating tensors in float64."""
    return tuple(
        (value.to(device, torch.float64) if value.is_floating_point() else value.to(device)) if isinstance(value, torch.Tensor) else value
        for value in host_inputs
    )
