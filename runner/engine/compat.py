"""torch APIs that moved or appeared between versions, found by looking rather than assuming.

Every lookup here names where it searched, so an error says what this torch lacks. The engine must
run on the GPU workers' torch (2.11) and on this repository's CI torch (2.13); nothing in it may
import a private torch module at import time.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

import torch

# Where each API has lived, newest first.
_MARK_UNBACKED_PLACES = (
    ("torch.compiler", "mark_unbacked"),
    ("torch._dynamo.decorators", "mark_unbacked"),
    ("torch._dynamo", "mark_unbacked"),
)
_MARK_DYNAMIC_PLACES = (
    ("torch.compiler", "mark_dynamic"),
    ("torch._dynamo.decorators", "mark_dynamic"),
    ("torch._dynamo", "mark_dynamic"),
)
# AOTInductor's package API (torch 2.6+: torch._inductor; later builds may publish it elsewhere).
_AOTI_COMPILE_PLACES = (
    ("torch.export.aoti", "aoti_compile_and_package"),
    ("torch._inductor", "aoti_compile_and_package"),
)
_AOTI_LOAD_PLACES = (
    ("torch.export.aoti", "aoti_load_package"),
    ("torch._inductor", "aoti_load_package"),
)
_MARK_STEP_PLACES = (
    ("torch.compiler", "cudagraph_mark_step_begin"),
    ("torch._inductor.cudagraph_trees", "mark_step_begin"),
)


class MissingTorchAPI(RuntimeError):
    """This torch build lacks an API the case needs (e.g. ``mark_unbacked`` before it existed)."""


def _find(places: tuple[tuple[str, str], ...]) -> Callable[..., Any] | None:
    for module_name, attr in places:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found = getattr(module, attr, None)
        if callable(found):
            return found
    return None


def _require(places: tuple[tuple[str, str], ...], what: str) -> Callable[..., Any]:
    found = _find(places)
    if found is None:
        searched = ", ".join(f"{m}.{a}" for m, a in places)
        raise MissingTorchAPI(f"torch {torch.__version__} has no {what} (looked for {searched})")
    return found


def mark_dynamic() -> Callable[..., Any]:
    return _require(_MARK_DYNAMIC_PLACES, "mark_dynamic")


def mark_unbacked() -> Callable[..., Any]:
    return _require(_MARK_UNBACKED_PLACES, "mark_unbacked")


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (``mark_unbacked``'s ``hint_override`` in newer builds)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def aoti_compile_and_package() -> Callable[..., Any]:
    return _require(_AOTI_COMPILE_PLACES, "aoti_compile_and_package")


def aoti_load_package() -> Callable[..., Any]:
    return _require(_AOTI_LOAD_PLACES, "aoti_load_package")


def export_dim_hint(name: str) -> Any | None:
    """``torch.export.Dim.<name>`` (AUTO, DYNAMIC, STATIC; UNBACKED in builds that have it), or None."""
    dim = getattr(getattr(torch, "export", None), "Dim", None)
    return getattr(dim, name, None) if dim is not None else None


def cudagraph_mark_step_begin() -> Callable[[], None] | None:
    return _find(_MARK_STEP_PLACES)


def dynamo_counters() -> dict | None:
    """``torch._dynamo.utils.counters``: {"graph_break": Counter(reason -> n), "stats": ..., "frames": ...}."""
    try:
        from torch._dynamo import utils as dynamo_utils
    except ImportError:
        return None
    return getattr(dynamo_utils, "counters", None)


def dynamo_attr(name: str) -> Any:
    """An attribute of ``torch._dynamo.utils`` (compile records: ``calculate_time_spent``,
    ``compilation_time_metrics``, ``get_compilation_metrics``), or None where this torch lacks it."""
    try:
        from torch._dynamo import utils as dynamo_utils
    except ImportError:
        return None
    return getattr(dynamo_utils, name, None)


def guard_failures() -> dict | None:
    """``torch._dynamo.utils.guard_failures``: code object -> guard-failure reasons, one per recompile."""
    try:
        from torch._dynamo import utils as dynamo_utils
    except ImportError:
        return None
    return getattr(dynamo_utils, "guard_failures", None)


def recompile_stopper() -> tuple[Callable[[], Any], type[BaseException]] | None:
    """(a context factory under which Dynamo, at a recompile, records the guard-failure reasons in
    ``guard_failures`` then raises instead of compiling, the error it raises):
    ``torch._dynamo.config.error_on_recompile`` and ``torch._dynamo.exc.RecompileError`` (both
    since torch 2.0; the reasons are recorded before the raise through 2.13). None where either is
    missing."""
    try:
        import torch._dynamo
        from torch._dynamo import exc as dynamo_exc
    except ImportError:
        return None
    config, error = torch._dynamo.config, getattr(dynamo_exc, "RecompileError", None)
    if error is None or not hasattr(config, "error_on_recompile"):
        return None
    return (lambda: config.patch(error_on_recompile=True)), error


def explain() -> Callable[..., Any] | None:
    """``torch._dynamo.explain`` (curried form ``explain(fn)(*args)`` since torch 2.1)."""
    import torch._dynamo

    return getattr(torch._dynamo, "explain", None)


def reset_dynamo() -> None:
    import torch._dynamo

    torch._dynamo.reset()
    counters = dynamo_counters()
    if counters is not None:
        counters.clear()


def out_of_memory_errors() -> tuple[type[BaseException], ...]:
    """Exception types that mean "out of memory" in this build (``torch.OutOfMemoryError`` since 2.1)."""
    found: list[type[BaseException]] = [MemoryError]
    for owner in (torch, getattr(torch, "cuda", None)):
        cls = getattr(owner, "OutOfMemoryError", None)
        if isinstance(cls, type) and cls not in found:
            found.append(cls)
    return tuple(found)


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
