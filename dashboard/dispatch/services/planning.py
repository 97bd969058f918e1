"""Which cases a requested run measures: its workloads (and suite's) x modes x regimes x dtypes, at a size."""
from __future__ import annotations

from dataclasses import dataclass

from contract import dims as dim_choice
from contract.catalog import resolve_entries
from contract.planning import Plan, plan_cases
from contract.suites import expand_suites, suite_problem
from contract.modes import TORCH_COMPILE_MODES
from contract.vocabulary import BACKENDS, COMPILE_MODES, DTYPES, SHAPE_REGIMES, SIZES


class MatrixError(ValueError):
    """A matrix field names something unknown; ``field`` says which."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


@dataclass(frozen=True)
class Matrix:
    workloads: list[str] | None  # None: the whole core suite; suite names already expanded
    modes: list[str]
    regimes: list[str]
    dtypes: list[str] | None  # None: each workload's first dtype
    device: str
    timeout_s: float
    backend: str = "inductor"  # eager / aot_eager exercise the workers without inductor
    dims: list[str] | None = None  # which dynamic dims backed/unbacked mark (contract.dims); None: all

    def as_dict(self) -> dict:
        matrix = {"workloads": self.workloads, "modes": self.modes, "regimes": self.regimes, "dtypes": self.dtypes,
                  "device": self.device, "timeout_s": self.timeout_s, "backend": self.backend}
        return {**matrix, "dims": self.dims} if self.dims is not None else matrix


def device_for(machine_class: str) -> str:
    """Machine classes named ``cpu...`` measure on the CPU; every other class on its GPU."""
    return "cpu" if machine_class.startswith("cpu") else "cuda"


def _subset(field: str, values, allowed) -> list[str] | None:
    if values is None:
        return None
    values = list(dict.fromkeys(values))
    unknown = [v for v in values if v not in allowed]
    if unknown or not values:
        raise MatrixError(field, f"unknown {', '.join(map(str, unknown)) or '(none given)'}; choose from {', '.join(allowed)}")
    return values


def matrix_resolve(*, size: str, machine_class: str, suite: str | None = None, workloads=None, modes=None, regimes=None,
                   dtypes=None, timeout_s: float | None = None, default_timeout_s: float, backend: str = "inductor",
                   dims=None) -> Matrix:
    """``size``: tiny or full; ``suite``: a suite (core, hf, ...) whose workloads join ``workloads``
    (a size given as the suite, as before #34, is refused naming ``size``)."""
    if size not in SIZES:
        raise MatrixError("size", f"unknown size {size!r}; choose from {', '.join(SIZES)}")
    if suite is not None:
        if problem := suite_problem(suite):
            raise MatrixError("suite", problem)
        workloads = [*(workloads or []), suite]
    device = device_for(machine_class)
    if timeout_s is not None and not 0 < timeout_s <= 24 * 3600:
        raise MatrixError("timeout_s", "must be between 0 and 86400 seconds")
    try:
        dims = dim_choice.parse(dims)
    except dim_choice.DimsError as exc:
        raise MatrixError("dims", str(exc)) from None
    return Matrix(
        # A suite name (core, hf, timm, torchvision, dist, all: docs/families.md) stands for its workloads.
        workloads=expand_suites(workloads) if workloads else None,
        # On a CPU the other modes are CUDA-graph and autotuning variants: the default mode only. The
        # compile paths (export, aot_inductor, ...) run when named (docs/compile-paths.md).
        modes=_subset("modes", modes, COMPILE_MODES) or (list(TORCH_COMPILE_MODES) if device == "cuda" else ["default"]),
        regimes=_subset("regimes", regimes, SHAPE_REGIMES) or list(SHAPE_REGIMES),
        dtypes=_subset("dtypes", dtypes, DTYPES),
        device=device,
        timeout_s=float(timeout_s or default_timeout_s),
        backend=(_subset("backend", [backend], BACKENDS) or ["inductor"])[0],
        dims=list(dims) if dims is not None else None,
    )


@dataclass(frozen=True)
class PlannedRun:
    plan: Plan
    descriptions: dict[str, dict]  # workload name -> its run-document ``workloads`` entry


def run_plan(*, size: str, matrix: Matrix) -> PlannedRun:
    """The cases, as ``python -m runner run`` would plan them, from the workload catalog (no torch).
    Raises MatrixError (``workloads``)."""
    try:
        workloads = resolve_entries(matrix.workloads)
    except LookupError as exc:
        raise MatrixError("workloads", str(exc)) from None
    plan = plan_cases(workloads, modes=matrix.modes, regimes=matrix.regimes, dtypes=matrix.dtypes, device=matrix.device,
                      backend=matrix.backend, size=size, repro_timeout_s=matrix.timeout_s, dims=matrix.dims)
    if not plan.cases:
        raise MatrixError("workloads", "no case to run: " + ("; ".join(plan.skipped) or "the matrix is empty"))
    return PlannedRun(plan=plan, descriptions={w.name: w.describe() for _, w in workloads})
