"""Where ``python -m runner run`` puts its document: ``--out`` written atomically (also each partial
document while the run goes on), else delivered (``runner.delivery``: the API or ``manage.py
ingest``); what could not be stored is saved in the working directory, so no run is lost."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def write_atomically(path: Path, document: dict) -> None:
    temporary = path.with_name(path.name + ".partial")
    temporary.write_text(json.dumps(document, indent=1) + "\n")
    os.replace(temporary, path)


def deliver_document(document: dict, out: Path | None, *, url: str | None = None, token: str | None = None,
                     artifacts_root: Path | None = None) -> int:
    """Write the document to ``out`` (its artifacts are already beside it), or post it to ``url``,
    or store it with ``manage.py ingest``, with the artifacts kept under ``artifacts_root``; on a
    storage failure, save it locally."""
    if out:
        write_atomically(out, document)
        print(f"run document written to {out}")
        return 0
    from runner.delivery import deliver

    try:
        print(deliver(document, url=url, token=token, artifacts_root=artifacts_root))
    except Exception as exc:  # noqa: BLE001 (keep hours of measurements when the database is unreachable)
        saved = save_unsent(document, document["run"]["id"])
        print(f"error: could not store the run ({type(exc).__name__}: {exc})\nthe run document is saved in {saved}", file=sys.stderr)
        return 1
    return 0


def save_unsent(payload: dict, name: str) -> Path:
    """Write what could not be stored into the working directory, so that no run is lost."""
    path = Path.cwd() / f"ptbench-run-{name}.json"
    path.write_text(json.dumps(payload, indent=1) + "\n")
    return path
