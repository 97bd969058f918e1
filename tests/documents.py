"""Valid run documents for tests, built in code so each test says what it changes."""
from __future__ import annotations

import copy
import uuid

WORKLOADS = [
    {"name": "mlp_loop", "category": "overhead-bound", "phase": "infer", "dynamic_dims": ["x:0"], "description": "tiny MLP"},
    {"name": "resnet_train", "category": "vision-train", "phase": "train", "dynamic_dims": ["images:0"], "description": "resnet"},
]


def make_result(workload: str = "mlp_loop", regime: str = "static", mode: str = "default", status: str = "pass", **metrics) -> dict:
    values = {
        "speedup": 1.25,
        "speedup_noise": 0.01,
        "eager_latency_ms": 2.5,
        "compiled_latency_ms": 2.0,
        "compile_time_cold_s": 7.5,
        "compile_time_warm_s": 1.5,
        "eager_peak_memory_bytes": 2_000_000,
        "compiled_peak_memory_bytes": 1_000_000,
        "graph_break_count": 1,
        "unique_graphs": 2,
        "recompile_count": 0,
        "accuracy_max_abs_error": 1e-6,
        "accuracy_max_rel_error": 1e-5,
    }
    values.update(metrics)
    return {
        "workload": workload,
        "config": {"compile_mode": mode, "shape_regime": regime, "dtype": "float32", "device": "cpu"},
        "status": status,
        "metrics": values,
        "samples": {"eager_ms": [2.5, 2.6, 2.4], "compiled_ms": [2.0, 2.1, 1.9], "calls_per_block": 10},
        "graph_breaks": [{"reason": "Tensor.item", "location": "model.py:12", "count": 1}],
        "recompiles": [],
        "error": None,
        "repro": f"python -m runner run --size tiny --workloads {workload} --modes {mode} --regimes {regime}",
        "duration_s": 12.0,
    }


def host_environment(compiled_share: float, probe_ms: float) -> dict:
    """A GPU result's ``environment``: the runner's host share (compiled side) and host probe."""
    return {"timing": {"host_share": {"eager": 0.6, "compiled": compiled_share},
                       "host_probe_ms": {"min": round(probe_ms * 0.9, 4), "median": probe_ms}}}


def make_document(*, run_id: str | None = None, git_sha: str = "cf30153c4c131c8164ee7798e5022d810682e2cb", results=None, **run_fields) -> dict:
    results = results if results is not None else [make_result(w["name"], r) for w in WORKLOADS for r in ("static", "backed", "unbacked")]
    return copy.deepcopy(
        {
            "schema_version": 1,
            "run": {
                "id": run_id or str(uuid.uuid4()),
                "suite": "tiny",
                "started_at": "2026-11-22T05:00:00+00:00",
                "finished_at": "2026-11-22T05:05:00+00:00",
                "command": "python -m runner run --size tiny",
                "requested_by": "ci@example",
                **run_fields,
            },
            "build": {
                "torch_version": "2.13.0+cpu",
                "git_sha": git_sha,
                "local_label": "",
                "label": "torch 2.13.0",
                "commit_time": None,
                "triton_version": None,
                "cuda_version": None,
                "python_version": "3.11.7",
                "environment": {},
            },
            "machine": {"hostname": "ci-box", "machine_class": "cpu", "cpu_model": "x86", "cpu_count": 2, "gpu_name": None, "gpu_count": 0},
            "workloads": WORKLOADS,
            "results": results,
        }
    )
