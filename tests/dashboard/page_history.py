"""Small build histories for the page tests, stored through the real ingest service."""
from __future__ import annotations

from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import WORKLOADS, make_document, make_result


def sha_for(day: int, machine_tag: str = "a") -> str:
    return f"{day:04x}" + machine_tag * 36


def ref_for_day(day: int) -> str:
    return sha_for(day)[:12]


def ingest_build(day: int, results: list[dict] | None = None, *, machine_class: str = "cpu", synthetic: bool = False,
                 extra_workloads: list[dict] | None = None, run_id: str | None = None, sha: str | None = None) -> dict:
    """Store one build's run: built on day ``day`` of November 2026 (so builds order by day)."""
    document = make_document(git_sha=sha or sha_for(day), results=results, synthetic=synthetic, run_id=run_id)
    document["build"]["commit_time"] = f"2026-11-{day:02d}T00:00:00+00:00"
    document["build"]["label"] = f"nightly {day}"
    document["machine"]["machine_class"] = machine_class
    document["workloads"] = WORKLOADS + (extra_workloads or [])
    run_ingest_and_detect(document=document)
    return document


def cases(speedup: float = 1.25, **overrides) -> list[dict]:
    """mlp_loop and resnet_train x static/backed/unbacked, every case with these metrics."""
    return [make_result(w["name"], regime, **{"speedup": speedup, **overrides}) for w in WORKLOADS for regime in ("static", "backed", "unbacked")]
