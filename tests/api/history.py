"""Build histories with a planted regression, posted through the API's submit endpoint with
regression detection running as in production (after commit; Celery eager)."""
from __future__ import annotations

import json
import random

from tests.dashboard.page_history import sha_for
from tests.documents import WORKLOADS, make_document, make_result
from tests.regressions.history import case  # noqa: F401 (the same planted cases as detection's tests)


def document_for_day(day: int, results: list[dict], machine_class: str = "cpu") -> dict:
    document = make_document(git_sha=sha_for(day), results=results)
    document["build"]["commit_time"] = f"2026-11-{day:02d}T00:00:00+00:00"
    document["build"]["label"] = f"nightly {day}"
    document["machine"]["machine_class"] = machine_class
    document["workloads"] = WORKLOADS
    return document


def planted_history(levels: list[float], *, failing_from: int | None = None, seed: int = 7) -> list[dict]:
    """One document per level (days 1, 2, ...): mlp_loop static at that speedup level (0.4% noise
    between builds) and resnet_train static steady; from day ``failing_from`` resnet_train fails."""
    rng = random.Random(seed)
    documents = []
    for day, level in enumerate(levels, start=1):
        steady = case(1.1 * (1 + rng.gauss(0, 0.004)), workload="resnet_train", rng=rng)
        if failing_from and day >= failing_from:
            steady = make_result("resnet_train", "static", status="compile_error", speedup=None, compiled_latency_ms=None)
            steady["error"] = {"type": "InductorError", "message": "planted failure"}
        documents.append(document_for_day(day, [case(level * (1 + rng.gauss(0, 0.004)), rng=rng), steady]))
    return documents


def post(client, document: dict):
    return client.post("/api/v1/runs/submit/", json.dumps(document), content_type="application/json")
