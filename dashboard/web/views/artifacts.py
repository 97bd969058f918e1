"""``/artifacts/<sha256>/``: a stored artifact's file, as a download (docs/artifacts.md).

An artifact is data a case produced: it is never rendered. It goes out as an attachment with a
content type no browser displays, ``nosniff`` and a sandboxing CSP, whatever the file holds."""
from django.http import FileResponse, Http404

from contract.artifacts import CONTENT_TYPE, sha256_error
from dashboard.results.artifacts import artifact_path, artifacts_stored


def artifact_download(request, sha256: str):
    if sha256_error(sha256):
        raise Http404("no such artifact")
    artifact = artifacts_stored(sha256s=[sha256]).get(sha256)
    path = artifact_path(sha256) if artifact else None
    if path is None or not path.is_file():
        raise Http404("no such artifact (never uploaded, or pruned)")
    response = FileResponse(open(path, "rb"), as_attachment=True, filename=artifact.name,  # noqa: SIM115 (FileResponse closes it)
                            content_type=CONTENT_TYPE)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, max-age=86400, immutable"  # the address is the content's hash
    return response
