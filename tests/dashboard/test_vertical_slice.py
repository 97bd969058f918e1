"""`python -m runner run` without --out: each case in a subprocess, stored through the ingest service."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dashboard.results.models import Result, Run

ROOT = __file__.rsplit("/tests/", 1)[0]
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_runner_stores_a_tiny_suite_in_the_configured_database(subprocess_env, client):
    # The eager backend keeps this end-to-end test cheap; tests/runner/test_runner_inductor.py
    # compiles a real case with inductor.
    command = [sys.executable, "-m", "runner", "run", "--size", "tiny", "--workloads", "mlp_loop,positional_graph_break",
               "--regimes", "static,backed,unbacked", "--backend", "eager", "--no-warm"]
    done = subprocess.run(command, cwd=ROOT, env=subprocess_env, capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, done.stderr[-3000:]
    run = Run.objects.get()
    results = Result.objects.filter(run=run).select_related("workload", "config")
    assert sorted((r.workload.name, r.config.case_config.shape_regime) for r in results) == [
        (w, regime) for w in ("mlp_loop", "positional_graph_break") for regime in ("backed", "static", "unbacked")
    ]
    assert all(r.status == "pass" and r.speedup > 0 and len(r.samples["eager_ms"]) >= 10 for r in results)
    breaks = results.get(workload__name="positional_graph_break", config__tags__shape_regime="static").graph_breaks
    assert breaks and "item()" in breaks[0]["reason"] and breaks[0]["location"]
    assert run.build.git_sha != "unknown" and run.machine.machine_class == "cpu"
    page = client.get("/").content.decode()
    assert str(run.id) in page and "positional_graph_break" in page
