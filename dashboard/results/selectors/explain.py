"""Two results of one case, side by side: what changed and its likeliest cause (contract.explain;
docs/explain.md). Read by the "what changed" page, its API and the regression alerts."""
from __future__ import annotations

from dataclasses import dataclass

from contract.document import METRIC_NAMES
from contract.explain import explain
from contract.metrics import BY_NAME, SHOWN, Metric
from contract.phases import BY_NAME as PHASES_BY_NAME
from contract.phases import COMPILE_SIDES, PHASE_NAMES
from contract.variants import Overrides
from detection import new_breaks, new_recompiles
from dashboard.results.models import Result

# What a finding calls a new graph-break or recompile reason is what /explain/ lists as added.
NEW_REASONS = {"graph_breaks": new_breaks, "recompiles": new_recompiles}

_RESULT_ENVIRONMENT = ("backend", "size", "implementation", "cuda_visible_devices", "workload_spec")
_MAX_VALUE = 300  # characters of one environment value shown


class NotTheSameCase(ValueError):
    """The two results are of different workloads or configurations: ``field`` names the later one."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class Explained:
    before: Result
    after: Result
    report: dict

    @property
    def metric_rows(self) -> list[dict]:
        """The pages' metrics either side has: before, after, relative change."""
        rows = []
        for m in SHOWN:
            a, b = getattr(self.before, m.name, None), getattr(self.after, m.name, None)
            if a is None and b is None:
                continue
            rows.append({"name": m.name, "label": m.label, "unit": m.unit, "before": a, "after": b,
                         "relative": b / a - 1 if a and b is not None else None})
        return rows

    @property
    def explained_metric(self) -> Metric | None:
        """The metric whose change the likeliest cause explains (contract.explain)."""
        return BY_NAME.get(self.report.get("metric") or "")

    @property
    def phases_not_run(self) -> list[tuple[str, list[str], int]]:
        """(compile, labels, cache hits after) for each compile either side recorded whose phases include
        none of these on either side: a warm compile that hit the cache lowers and generates no code."""
        out = []
        for side in COMPILE_SIDES:
            names = {r["name"] for r in self.report["phases"] if r["side"] == side}
            if "total" not in names or len(names) == 1:
                continue
            missing = [PHASES_BY_NAME[p].label for p in PHASE_NAMES if p not in names]
            hits = next((c["after"] for c in self.report["counts"] if c["side"] == side and c["name"] == "cache_hits"), None)
            if missing:
                out.append((side, missing, hits or 0))
        return out

    @property
    def reason_changes(self) -> list[tuple[str, dict]]:
        return [("graph breaks", self.report["graph_breaks"]), ("recompiles", self.report["recompiles"])]


def _flat(prefix: str, value, into: dict) -> None:
    if isinstance(value, dict) and prefix.count(".") < 2:
        for key, item in value.items():
            _flat(f"{prefix}.{key}", item, into)
    else:
        text = value if isinstance(value, (int, float, bool)) or value is None else str(value)
        into[prefix] = text[:_MAX_VALUE] if isinstance(text, str) else text


def result_environment(result: Result) -> dict:
    """Flat name -> value: the build (torch, triton, CUDA, Python, settings), the machine (host CPU,
    GPU, driver) and the case's own facts."""
    build, machine = result.build, result.run.machine
    facts = result.run.build_facts or {}  # as this run saw its build; the Build row keeps the first run's
    env: dict = {
        "torch": build.torch_version, "torch git sha": build.git_sha,
        "triton": facts.get("triton_version", build.triton_version),
        "CUDA": facts.get("cuda_version", build.cuda_version) or machine.cuda_version,
        "Python": facts.get("python_version", build.python_version),
        "settings": Overrides.recorded(build.overrides).summary() if build.overrides else "",
        "host CPU": machine.cpu_model, "GPU": machine.gpu_name, "driver": machine.driver_version,
        "host": machine.hostname,
    }
    for key, value in (facts.get("environment", build.environment) or {}).items():
        if key not in ("build",):
            _flat(f"build.{key}", value, env)
    for key in _RESULT_ENVIRONMENT:
        if key in (result.environment or {}):
            env[f"case.{key}"] = result.environment[key]
    return env


def result_side(result: Result) -> dict:
    return {
        "metrics": {name: getattr(result, name) for name in METRIC_NAMES},
        "compile_phases": result.compile_phases,
        "path_phases": result.path_phases,
        "kernel_profile": result.kernel_profile,
        "graph_breaks": result.graph_breaks,
        "recompiles": result.recompiles,
        "status": result.status,
        "error": result.error,
        "environment": result_environment(result),
    }


def _load(result_id: int) -> Result:
    return Result.objects.select_related("build", "run__machine", "workload", "config").get(pk=result_id)


def results_explain(*, before_id: int, after_id: int, metric: str | None = None) -> Explained:
    """Raises Result.DoesNotExist for an unknown id, NotTheSameCase for two different cases."""
    before, after = _load(before_id), _load(after_id)
    if (before.workload_id, before.config_id) != (after.workload_id, after.config_id):
        raise NotTheSameCase("after", f"result {after.pk} is {after.workload.name} {after.config}, "
                                      f"result {before.pk} is {before.workload.name} {before.config}: not one case")
    return Explained(before, after, explain(result_side(before), result_side(after), metric=metric, new_of=NEW_REASONS))
