"""How a case calls its workload: dtype and autocast, input copies, dynamic-dim marks, compile args."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import torch

from contract import dims as dim_choice
from contract.spec import CaseSpec
from runner.engine import compat

_TORCH_DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    # "amp": float32 weights and inputs, run under torch.autocast with bfloat16 (no grad scaler
    # needed, and the same on CPU and GPU).
    "amp": torch.float32,
}
AMP_DTYPE = torch.bfloat16


def build_dtype(dtype: str) -> torch.dtype:
    return _TORCH_DTYPES[dtype]


# Modes that deploy an inference graph run both sides under no_grad (freezing folds weights only
# there; an exported program is exported from it), so eager is timed as it would be deployed.
NO_GRAD_MODES = ("export", "aot_inductor", "freezing")
# Inductor settings of the compile paths that are torch.compile (docs/compile-paths.md): on a GPU
# freezing runs with CUDA graphs, as the HUD's freezing_cudagraphs configuration does.
PATH_OPTIONS = {"cpp_wrapper": {"cpp_wrapper": True}, "freezing": {"freezing": True}}


def runnable(fn: Callable[..., Any], spec: CaseSpec, *, grad_mode: bool = True) -> Callable[..., Any]:
    """``fn`` as the case runs it: under autocast for ``amp``, under no_grad for ``NO_GRAD_MODES``
    (``grad_mode=False``: not here, the caller sets it, as export does around the whole export)."""
    if spec.dtype == "amp":
        fn = _under(fn, lambda: torch.autocast(device_type=spec.device, dtype=AMP_DTYPE))
    if grad_mode and spec.compile_mode in NO_GRAD_MODES:
        fn = without_grad(fn)
    return fn


def without_grad(fn: Callable[..., Any]) -> Callable[..., Any]:
    return _under(fn, torch.no_grad)


def _under(fn: Callable[..., Any], context: Callable[[], Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        with context():
            return fn(*args)

    return call


def clone_inputs(inputs: Sequence[Any]) -> tuple:
    """Independent copies, so that in-place updates by one side never reach the other."""
    return tuple(value.clone() if isinstance(value, torch.Tensor) else value for value in inputs)


def marked_dims(workload, spec: CaseSpec) -> tuple:
    """The workload's dynamic dims the case's regime marks: those its ``dims`` name by role or
    name (contract.dims), every declared one when it names none, none for a static regime."""
    if spec.shape_regime == "static":
        return ()
    dims = tuple(workload.dynamic_dims)
    selection = dim_choice.select(dim_choice.declared(workload), spec.dims)
    if selection.unmatched:
        raise ValueError(f"dims {', '.join(selection.unmatched)}: {workload.name} declares no such dynamic dim "
                         f"(declares {dim_choice.describe(dim_choice.declared(workload))})")
    return tuple(dims[i] for i in selection.marked)


HINT = "hint_override"


def mark_dynamic_dims(inputs: Sequence[Any], input_names: Sequence[str], dynamic_dims: Sequence[Any], regime: str) -> None:
    """Mark the workload's dynamic dims: ``mark_dynamic`` (backed) or ``mark_unbacked`` (unbacked;
    a dim with ``hint`` gets its size as ``hint_override`` where the build takes one)."""
    if regime == "static" or not dynamic_dims:
        return
    mark = compat.mark_dynamic() if regime == "backed" else compat.mark_unbacked()
    hinted = regime == "unbacked" and compat.takes_keyword(mark, HINT)
    positions = {name: index for index, name in enumerate(input_names)}
    for dim in dynamic_dims:
        if dim.input not in positions:
            raise ValueError(f"dynamic dim {dim} names no input; inputs are {list(input_names)}")
        tensor = inputs[positions[dim.input]]
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"dynamic dim {dim} is on a {type(tensor).__name__}, not a tensor")
        if hinted and getattr(dim, "hint", False):
            mark(tensor, dim.dim, **{HINT: tensor.size(dim.dim)})
        else:
            mark(tensor, dim.dim)


def unbacked_hint(dynamic_dims: Sequence[Any], regime: str) -> str:
    """How the unbacked marks of hinted dims were made (the case's environment), "" when none is hinted."""
    if regime != "unbacked" or not any(getattr(dim, "hint", False) for dim in dynamic_dims):
        return ""
    if compat.takes_keyword(compat.mark_unbacked(), HINT):
        return f"mark_unbacked({HINT}=the dim's size)"
    return f"mark_unbacked without a hint: torch {torch.__version__} takes no {HINT}"


def compile_kwargs(spec: CaseSpec) -> dict:
    """``torch.compile`` arguments: ``mode`` (or a path's inductor ``options``) only means something
    to inductor; static is dynamic=False. export compiles its exported module with these (no mode)."""
    kwargs: dict[str, Any] = {"backend": spec.backend}
    if spec.backend == "inductor" and spec.compile_mode in PATH_OPTIONS:
        options = dict(PATH_OPTIONS[spec.compile_mode])
        if spec.compile_mode == "freezing" and spec.device == "cuda":
            options["triton.cudagraphs"] = True
        kwargs["options"] = options
    elif spec.backend == "inductor" and spec.compile_mode not in ("default", "export", "aot_inductor"):
        kwargs["mode"] = spec.compile_mode
    if spec.shape_regime == "static":
        kwargs["dynamic"] = False
    return kwargs


def uses_cuda_graphs(spec: CaseSpec) -> bool:
    return spec.device == "cuda" and spec.backend == "inductor" and spec.compile_mode in ("reduce-overhead", "max-autotune", "freezing")


def compiled_caller(compiled: Callable[..., Any], spec: CaseSpec) -> Callable[..., Any]:
    """Under CUDA graphs each call starts a new step, so outputs of the previous call may be reused."""
    mark_step = compat.cudagraph_mark_step_begin() if uses_cuda_graphs(spec) else None
    if mark_step is None:
        return compiled

    def call(*args: Any) -> Any:
        mark_step()
        return compiled(*args)

    return call
