"""Where a finished run's document goes when ``python -m runner run`` has no ``--out``: posted
through the dashboard's API (``--url``, the standard-library client of ``runner.ci``), or handed to
the dashboard's one ingest entry point, ``manage.py ingest``, in a subprocess of this repository's
``manage.py`` (the runner never imports Django)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MANAGE_PY = Path(__file__).resolve().parents[1] / "manage.py"


class DeliveryFailed(Exception):
    """The dashboard did not store the document; ``args[0]`` says why."""


def stored_line(outcome: dict) -> str:
    verb = "stored" if outcome.get("created") else "already stored"
    return f"run {outcome.get('run_id')} {verb}: {outcome.get('results_created')} results created"


def post_document(document: dict, *, url: str, token: str | None, artifacts_root: Path | None = None) -> str:
    """Submit ``document`` to the API at ``url`` (first the artifacts its results keep under
    ``artifacts_root``); returns a one-line summary."""
    from runner.artifact_upload import upload_results_artifacts
    from runner.ci import ApiError, Client

    client = Client(url, token=token)
    if artifacts_root is not None:
        upload_results_artifacts(results=document["results"], root=artifacts_root, client=client)
    try:
        _, outcome = client.call("POST", "/runs/submit/", body=json.dumps(document).encode())
    except ApiError as exc:
        raise DeliveryFailed(str(exc)) from None
    return stored_line(outcome)


def ingest_document(document: dict, *, artifacts_root: Path | None = None) -> str:
    """Store ``document`` with ``manage.py ingest`` (the configured database), with the artifacts
    its results keep under ``artifacts_root`` (the document is written there, beside them: the
    command stores what it references); returns a one-line summary."""
    with tempfile.TemporaryDirectory(prefix="ptbench-ingest-") as folder:
        path = Path(artifacts_root or folder) / "run.json"
        path.write_text(json.dumps(document))
        done = subprocess.run([sys.executable, str(MANAGE_PY), "ingest", "--json", str(path)], capture_output=True,
                              text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=MANAGE_PY.parent)
    if done.returncode != 0:
        lines = [line.replace(f"{path}: ", "", 1) for line in done.stderr.strip().splitlines()]
        raise DeliveryFailed("; ".join(lines[-20:]) or f"manage.py ingest exited with {done.returncode}")
    return stored_line(json.loads(done.stdout.strip().splitlines()[-1]))


def deliver(document: dict, *, url: str | None = None, token: str | None = None, artifacts_root: Path | None = None) -> str:
    if url:
        return post_document(document, url=url, token=token, artifacts_root=artifacts_root)
    return ingest_document(document, artifacts_root=artifacts_root)
