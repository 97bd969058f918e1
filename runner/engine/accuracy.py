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
from typing import Any, Callable, Iterator

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


def map_tensors(tree: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``tree`` with ``fn`` applied to every tensor; dataclass-like objects become dicts."""
    if isinstance(tree, torch.Tensor):
        return fn(tree)
    if isinstance(tree, dict):
        return {key: map_tensors(value, fn) for key, value in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(map_tensors(v, fn) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(map_tensors(v, fn) for v in tree)
    if hasattr(tree, "__dataclass_fields__"):
        return {name: map_tensors(getattr(tree, name), fn) for name in tree.__dataclass_fields__}
    return tree


def to_host(tree: Any) -> Any:
    """A detached CPU copy of every tensor in ``tree``; everything else as it is."""
    return map_tensors(tree, lambda tensor: tensor.detach().to("cpu", copy=True))


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


# Elements per slice of a tensor compared at once: the float64 temporaries of a slice stay near
# 128 MiB each however large the output (BertForMaskedLM's logits at batch 32: 500 M elements).
CHUNK_ELEMENTS = 1 << 24


def _slices(*tensors: torch.Tensor, device: str) -> Iterator[tuple[torch.Tensor, ...]]:
    """Equal-shaped tensors, flattened, in slices of ``CHUNK_ELEMENTS`` on ``device``, in float64."""
    flat = [t.reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), CHUNK_ELEMENTS):
        yield tuple(t[start:start + CHUNK_ELEMENTS].to(device).to(torch.float64) for t in flat)


@dataclass
class _Tally:
    """A floating tensor pair's comparison, slice by slice (the same figures as in one piece)."""

    got_nans: int = 0
    want_nans: int = 0
    nans_differ: bool = False
    infs_differ: bool = False
    max_abs: float = 0.0
    max_rel: float = 0.0
    within: bool = True

    def add(self, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> None:
        got_nan, want_nan = torch.isnan(got), torch.isnan(want)
        self.got_nans += int(got_nan.sum())
        self.want_nans += int(want_nan.sum())
        if not torch.equal(got_nan, want_nan):
            self.nans_differ = True
            return
        got = got.masked_fill(got_nan, 0.0)
        want = want.masked_fill(want_nan, 0.0)
        got_inf, want_inf = torch.isinf(got), torch.isinf(want)
        if not torch.equal(got_inf, want_inf) or not torch.equal(got[got_inf], want[want_inf]):
            self.infs_differ = True
            return
        got = got.masked_fill(got_inf, 0.0)
        want = want.masked_fill(want_inf, 0.0)
        diff = (got - want).abs()
        self.max_abs = max(self.max_abs, float(diff.max()))
        # Relative to the reference's magnitude, floored at atol so that near-zero references do not
        # turn rounding into huge relative errors.
        self.max_rel = max(self.max_rel, float((diff / want.abs().clamp_min(max(atol, 1e-12))).max()))
        self.within = self.within and bool((diff <= atol + rtol * want.abs()).all())


def _tensor_errors(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float, device: str) -> tuple[bool, float, float, str]:
    if actual.shape != expected.shape:
        return False, math.nan, math.nan, f"shape {tuple(actual.shape)} != eager {tuple(expected.shape)}"
    if not (expected.is_floating_point() or expected.is_complex()):
        equal = bool(torch.equal(actual.to(expected.dtype), expected))
        differing = 0 if equal else int((actual.to(expected.dtype) != expected).sum())
        return equal, 0.0 if equal else math.nan, 0.0 if equal else math.nan, "" if equal else f"{differing} elements differ"
    if actual.numel() == 0:
        return True, 0.0, 0.0, ""
    tally = _Tally()
    for got, want in _slices(actual, expected, device=device):
        tally.add(got, want, rtol, atol)
    if tally.nans_differ:
        return False, math.nan, math.nan, f"NaN in {tally.got_nans} compiled vs {tally.want_nans} eager elements"
    if tally.infs_differ:
        return False, math.nan, math.nan, "infinities differ"
    problem = "" if tally.within else f"max abs error {tally.max_abs:.3g}, max rel error {tally.max_rel:.3g} (rtol {rtol:g}, atol {atol:g})"
    return tally.within, tally.max_abs, tally.max_rel, problem


def _scalar_errors(actual: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, float, float, str]:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool) and isinstance(actual, (int, float)):
        diff = abs(actual - expected)
        ok = diff <= atol + rtol * abs(expected)
        return ok, float(diff), float(diff / max(abs(expected), atol)), "" if ok else f"{actual!r} != eager {expected!r}"
    ok = actual == expected
    return ok, 0.0 if ok else math.nan, 0.0 if ok else math.nan, "" if ok else f"{actual!r} != eager {expected!r}"


def compare_outputs(actual: Any, expected: Any, *, rtol: float, atol: float, device: str = "cpu") -> Comparison:
    """Compare two host pytrees (see ``to_host``): the compiled output against the eager reference,
    the arithmetic on ``device`` (a case's GPU: seconds of host arithmetic on a large output are
    milliseconds there), slice by slice."""
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
                leaf = _tensor_errors(a, e, rtol, atol, device)
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


def _rmse(a: torch.Tensor, b: torch.Tensor, device: str) -> float:
    squares = sum(float(((x - y) ** 2).sum()) for x, y in _slices(a, b, device=device))
    return math.sqrt(squares / a.numel())


@dataclass(frozen=True)
class Fp64Verdict:
    ok: bool
    compiled_rmse: float  # largest over output tensors, against the float64 run
    eager_rmse: float


def judge_against_fp64(actual: Any, expected: Any, fp64: Any, *, atol: float, multiplier: float = 2.0,
                       device: str = "cpu") -> Fp64Verdict:
    """Is compiled no more than ``multiplier`` times farther from float64 than eager is (per tensor)?

    ``atol / 10`` is added to the allowance so that an eager output that happens to match float64
    exactly does not demand the same of compiled. All three pytrees must share a structure; the
    arithmetic runs on ``device``, where the float64 output may already be.
    """
    leaves = list(zip(flatten(actual), flatten(expected), flatten(fp64)))
    ok, worst_compiled, worst_eager = True, 0.0, 0.0
    for (_, a), (_, e), (_, f) in leaves:
        if not all(isinstance(t, torch.Tensor) for t in (a, e, f)) or not f.is_floating_point() or f.numel() == 0:
            continue
        if a.shape != f.shape or e.shape != f.shape:
            return Fp64Verdict(False, math.inf, math.inf)
        compiled_rmse, eager_rmse = _rmse(a, f, device), _rmse(e, f, device)
        worst_compiled, worst_eager = max(worst_compiled, compiled_rmse), max(worst_eager, eager_rmse)
        if not compiled_rmse <= multiplier * eager_rmse + atol / 10:  # NaN fails too
            ok = False
    return Fp64Verdict(ok, worst_compiled, worst_eager)


# Where no float64 run can be made (a 20B model's float64 copy is 167 GB, past any one GPU), PyTorch's
# harness judges by cosine similarity instead (benchmarks/dynamo/common.py: "fp64 golden ref were not
# generated ... Setting accuracy check to cosine"; torch._dynamo.utils.same: at least 0.99).
COSINE_FLOOR = 0.99


def cosine_agreement(actual: Any, expected: Any, *, device: str = "cpu") -> float:
    """The smallest cosine similarity, over floating output tensors, of compiled's output and eager's
    (each flattened; in float64 slices). 1.0 where there is nothing to compare; NaN-bearing outputs
    give NaN, which no floor passes."""
    worst = 1.0
    for (_, a), (_, e) in zip(flatten(actual), flatten(expected)):
        if not (isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor)) or not e.is_floating_point() or e.numel() == 0:
            continue
        if a.shape != e.shape:
            return 0.0
        dot = norm_a = norm_e = 0.0
        for x, y in _slices(a, e, device=device):
            dot += float((x * y).sum())
            norm_a += float((x * x).sum())
            norm_e += float((y * y).sum())
        cosine = dot / max(math.sqrt(norm_a) * math.sqrt(norm_e), 1e-12)
        worst = cosine if math.isnan(cosine) else min(worst, cosine)
        if math.isnan(worst):
            return worst
    return worst


def inputs_as_fp64(host_inputs: Any, device: str) -> tuple:
    """Host copies of the inputs on ``device``, floating tensors in float64."""
    return tuple(
        (value.to(device, torch.float64) if value.is_floating_point() else value.to(device)) if isinstance(value, torch.Tensor) else value
        for value in host_inputs
    )
