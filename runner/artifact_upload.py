"""A case's kept artifact handed to a dashboard: ``PUT /api/v1/artifacts/<sha256>/`` with the
file as the body (docs/artifacts.md). Used by ``python -m runner run --url`` and by the workers,
whose results then reference it by sha256 only: the file never travels through the broker."""
from __future__ import annotations

from pathlib import Path

from contract.artifacts import CONTENT_TYPE
from runner.ci import ApiError, Client


def upload_artifact(*, client: Client, path: Path, reference: dict) -> None:
    """Upload the file at ``path`` that ``reference`` (a result's ``artifact``) describes; raises
    ApiError when the dashboard refuses it or cannot be reached."""
    client.call("PUT", f"/artifacts/{reference['sha256']}/", params={"name": reference["name"]}, body=path.read_bytes(),
                content_type=CONTENT_TYPE)


def upload_results_artifacts(*, results: list[dict], root: Path, client: Client) -> None:
    """Upload the artifact of every result that has one beside the document (``path`` under
    ``root``); a result whose upload failed keeps its reference with ``upload_error`` (its page
    says the file is not on the dashboard), and the run is stored all the same."""
    for result in results:
        reference = result.get("artifact")
        if not reference:
            continue
        local = root / reference.pop("path", reference["name"])
        try:
            upload_artifact(client=client, path=local, reference=reference)
        except (ApiError, OSError) as exc:
            reference["upload_error"] = str(exc)[:2000]
