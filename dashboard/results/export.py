"""A stored run as a run document again (``manage.py export_run``): what was ingested comes back
out, so a run measured through the workers can be kept as a file, shared, or loaded elsewhere."""
from __future__ import annotations

from dashboard.results.models import Result, Run
from contract.document import METRIC_NAMES, SCHEMA_VERSION, V2_RESULT_FIELDS, check_document


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def _without_nulls(values: dict) -> dict:
    return {k: v for k, v in values.items() if v not in (None, "")}


def run_document(*, run: Run) -> dict:
    """The run's document, checked against the schema (raises ``InvalidDocument`` if it is not)."""
    build, machine = run.build, run.machine
    results = list(Result.objects.filter(run=run).select_related("workload", "config").order_by("id"))
    workloads = {r.workload.name: r.workload for r in results}
    document = {
        "schema_version": SCHEMA_VERSION,
        "run": _without_nulls({
            "id": str(run.id), "suite": run.size, "started_at": _iso(run.started_at), "finished_at": _iso(run.finished_at),
            "command": run.command, "requested_by": run.requested_by, "synthetic": run.synthetic, "notes": run.notes,
        }),
        "build": _without_nulls({
            "torch_version": build.torch_version, "git_sha": build.git_sha, "local_label": build.local_label,
            "label": build.label, "commit_time": _iso(build.commit_time), "triton_version": build.triton_version,
            "cuda_version": build.cuda_version, "python_version": build.python_version, "environment": build.environment,
        }),
        "machine": _without_nulls({
            "hostname": machine.hostname, "machine_class": machine.machine_class, "cpu_model": machine.cpu_model,
            "cpu_count": machine.cpu_count, "memory_bytes": machine.memory_bytes, "gpu_name": machine.gpu_name,
            "gpu_count": machine.gpu_count, "driver_version": machine.driver_version, "cuda_version": machine.cuda_version,
        }),
        "workloads": [
            _without_nulls({"name": w.name, "category": w.category, "phase": w.phase, "dynamic_dims": w.dynamic_dims,
                            "description": w.description})
            for w in workloads.values()
        ],
        "results": [
            {
                "workload": r.workload.name,
                "config": r.config.case_config.as_document(),
                "status": r.status,
                "metrics": {name: getattr(r, name) for name in METRIC_NAMES},
                "samples": r.samples,
                "graph_breaks": r.graph_breaks,
                "recompiles": r.recompiles,
                "error": r.error,
                **({"path_phases": r.path_phases} if r.path_phases else {}),
                "repro": r.repro,
                "duration_s": r.duration_s,
                "environment": r.environment,
                **({"artifact": r.artifact} if r.artifact else {}),  # its file stays in the store (docs/artifacts.md)
                **{name: getattr(r, name) for name in V2_RESULT_FIELDS if getattr(r, name)},
            }
            for r in results
        ],
    }
    return check_document(document)
