"""A suite's cases: workloads x modes x regimes x dtypes, each with the command that reruns it alone.

Pure: a workload here is anything with ``name``, ``dtypes`` and ``dynamic_dims`` (a
``workloads.base.Workload`` on the runner's side, a ``contract.catalog.Entry`` on the dashboard's),
so the dashboard plans cases without importing torch or ``workloads``.
"""
from __future__ import annotations

import re

import shlex
from dataclasses import dataclass
from typing import Sequence

from contract import dims as dim_choice
from contract.modes import skip_reason
from contract.spec import CaseSpec
from contract.variants import Overrides


AMP = "amp"


@dataclass(frozen=True)
class PlannedCase:
    spec: CaseSpec
    workload_name: str  # the name declared in the document (``Workload.name``)
    repro: str


@dataclass(frozen=True)
class Plan:
    cases: list[PlannedCase]
    skipped: list[str]  # one line per combination left out, and why


_OLD_SIZE_FLAG = re.compile(r"(?<!\S)--suite (tiny|full)(?!\S)")
_TIMEOUT_FLAG = re.compile(r" --timeout (\d+(?:\.\d+)?)(?!\S)")
DEFAULT_TIMEOUT_S = 900.0  # the runner's --timeout per case subprocess


def current_repro(repro: str) -> str:
    """A stored repro command as today's runner takes it: before issue #34 a size was ``--suite tiny``
    (``--suite`` now names a suite, and the runner answers that old spelling with exit 2), so an
    older document's ``--suite tiny|full`` reads ``--size tiny|full``; a ``--timeout`` within the
    runner's default is dropped, as ``repro_command`` drops it (#42 item 8: one timeout on every page)."""
    repro = _OLD_SIZE_FLAG.sub(r"--size \1", repro or "")
    return _TIMEOUT_FLAG.sub(lambda m: "" if float(m.group(1)) <= DEFAULT_TIMEOUT_S else m.group(0), repro)


def repro_command(spec: CaseSpec, *, python: str | None = None, timeout_s: float | None = None) -> str:
    """``python -m runner run ...`` that reruns exactly this case, a build variant's overrides included."""
    argv = [
        "python", "-m", "runner", "run",
        "--size", spec.size,
        "--workloads", spec.workload,
        "--modes", spec.compile_mode,
        "--regimes", spec.shape_regime,
        "--dtypes", spec.dtype,
        "--device", spec.device,
    ]  # fmt: skip
    if spec.dims is not None:
        argv += ["--dims", ",".join(spec.dims)]
    if spec.backend != "inductor":
        argv += ["--backend", spec.backend]
    if python:
        argv += ["--python", python]
    if timeout_s is not None and timeout_s > DEFAULT_TIMEOUT_S:  # the default is time enough for a shorter one
        argv += ["--timeout", f"{timeout_s:g}"]
    argv += Overrides.recorded({"config": spec.config_overrides, "env": spec.env_overrides}).cli_arguments()
    return shlex.join(argv)


def plan_cases(
    workloads: Sequence[tuple[str, object]],
    *,
    modes: Sequence[str],
    regimes: Sequence[str],
    dtypes: Sequence[str] | None,
    device: str,
    backend: str,
    size: str,
    repro_python: str | None = None,
    repro_timeout_s: float | None = None,
    import_allowed: bool = False,
    overrides=None,
    dims: Sequence[str] | None = None,
) -> Plan:
    """``workloads`` are (how the user named it, Workload). ``dtypes=None``: each workload's default.
    A mode that cannot run a regime or phase (``contract.modes``: export runs inference only) leaves
    the case out with its reason in ``skipped``.
    ``import_allowed``: the case process may import a ``module:Class`` name (the local CLI only);
    a family's model (``workload.family`` set: docs/families.md) imports nothing by name.
    ``dims``: which dynamic dims a non-static regime marks, by role or name (``contract.dims``;
    None: all); a name the workload does not declare is left out with its reason, and a workload
    that declares none of them runs no dynamic case. ``amp`` plans training workloads only
    (docs/case-config.md, "AMP")."""
    cases: list[PlannedCase] = []
    skipped: list[str] = []
    planned_names: set[str] = set()
    for requested_name, workload in workloads:
        if workload.name in planned_names:
            skipped.append(f"{requested_name}: workload {workload.name} is already in the plan")
            continue
        planned_names.add(workload.name)
        supported = tuple(workload.dtypes)
        wanted = list(dtypes) if dtypes else [supported[0]]
        phase = getattr(workload, "phase", "infer")
        case_dims, dims_problem = dim_choice.skip_reason(workload.name, dim_choice.declared(workload), dims)
        for dtype in wanted:
            if dtype == AMP and phase != "train":
                skipped.append(f"{workload.name}: dtype amp is autocast for training steps, as PyTorch's harness runs "
                               "training; an inference workload runs bfloat16 or float32")
                continue
            if dtype not in supported:
                skipped.append(f"{workload.name}: dtype {dtype} not supported (supports {', '.join(supported)})")
                continue
            for regime in regimes:
                if regime != "static" and not workload.dynamic_dims:
                    skipped.append(f"{workload.name}: regime {regime} needs dynamic dims; this workload has none")
                    continue
                if regime != "static" and dims_problem:
                    skipped.append(dims_problem)
                    if not case_dims:
                        continue
                for mode in modes:
                    if why := skip_reason(mode, regime=regime, phase=phase):
                        skipped.append(f"{workload.name}: {why}")
                        continue
                    spec = CaseSpec(
                        workload=requested_name,
                        compile_mode=mode,
                        shape_regime=regime,
                        dtype=dtype,
                        device=device,
                        backend=backend,
                        size=size,
                        import_allowed=import_allowed and ":" in requested_name and not getattr(workload, "family", ""),
                        config_overrides=dict(overrides.config) if overrides else {},
                        env_overrides=dict(overrides.env) if overrides else {},
                        dims=case_dims if regime != "static" else None,
                    )
                    repro = repro_command(spec, python=repro_python, timeout_s=repro_timeout_s)
                    cases.append(PlannedCase(spec=spec, workload_name=workload.name, repro=repro))
    return Plan(cases=cases, skipped=sorted(set(skipped), key=skipped.index))
