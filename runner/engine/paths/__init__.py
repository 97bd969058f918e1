"""The compiled side of a case, made the way its compile mode deploys (docs/compile-paths.md).

- the ``torch.compile`` modes, ``cpp_wrapper`` and ``freezing`` (inductor settings:
  ``runner.engine.prepare.compile_kwargs``): ``torch.compile``, compiled by the first call;
- ``export`` (``export_path``): ``torch.export.export``, then the exported program's module
  compiled by ``torch.compile``;
- ``aot_inductor`` (``aoti``): exported, compiled into a package, loaded.

Each returns a ``Deployed``: the callable that is timed, the seconds of each phase before its first
call (the result's ``path_phases``), and what the path found (``environment.compile_path``).
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from contract.modes import MODES
from contract.spec import CaseSpec
from runner.engine.prepare import compile_kwargs, compiled_caller, runnable


@dataclass
class Deployed:
    fn: Callable[..., Any]
    phases: dict[str, float] = field(default_factory=dict)  # export_s, package_s, load_s
    facts: dict = field(default_factory=dict)  # environment.compile_path (empty for a torch.compile mode)
    fixed_shapes: bool = False  # accepts only the shapes it was made for (a static export or package)
    dynamo: bool = True  # compiled by torch.compile (its guards counted), not loaded from a package

    def finish(self, first_call_s: float) -> float:
        """The cold (or warm) compile time: every phase before the first call, and the first call."""
        before = sum(self.phases.values())
        if self.phases:
            self.phases["first_call_s"] = first_call_s
        if self.facts and self.dynamo:
            self.facts["guards"] = compile_guard_count()
        return before + first_call_s


# Called with (phase, seconds) as each phase ends: the case writes its record, so that a process
# that dies in the next phase (an AOTInductor package's load) says which phases it finished.
_listeners: list[Callable[[str, float], None]] = []


@contextlib.contextmanager
def phase_listener(listener: Callable[[str, float], None]):
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


class Stopwatch:
    """``with watch.phase("export_s"): ...`` records the block's seconds (device synchronised) and
    tells the ``phase_listener``s once the block ended without an error."""

    def __init__(self, device: str):
        self.device = device
        self.phases: dict[str, float] = {}

    def phase(self, name: str):
        return _Phase(self, name)


class _Phase:
    def __init__(self, watch: Stopwatch, name: str):
        self.watch, self.name = watch, name

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, kind, *exc) -> None:
        if self.watch.device == "cuda":
            torch.cuda.synchronize()
        self.watch.phases[self.name] = seconds = time.perf_counter() - self.started
        if kind is None:
            for listener in list(_listeners):
                listener(self.name, seconds)


def compile_guard_count() -> int | None:
    """Guards dynamo installed for the compiles of this process (``CompilationMetrics.guard_count``
    summed), or None where this torch does not record them."""
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return None
    counts = [getattr(m, "guard_count", None) for m in get_compilation_metrics()]
    counts = [c for c in counts if c is not None]
    return sum(counts) if counts else None


def deploy(spec: CaseSpec, instance, inputs: tuple, dynamic_dims=()) -> Deployed:
    """Instance B made callable the way ``spec.compile_mode`` deploys it (inputs already marked per regime)."""
    if spec.compile_mode == "export":
        from runner.engine.paths import export_path

        return export_path.deploy(spec, instance, inputs, dynamic_dims)
    if spec.compile_mode == "aot_inductor":
        from runner.engine.paths import aoti

        return aoti.deploy(spec, instance, inputs, dynamic_dims)
    compiled = torch.compile(runnable(instance.fn, spec), **compile_kwargs(spec))
    facts = {"path": spec.compile_mode, "inductor": compile_kwargs(spec).get("options", {})} if MODES[spec.compile_mode].path else {}
    return Deployed(compiled_caller(compiled, spec), facts=facts)
