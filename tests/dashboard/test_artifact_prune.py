"""#34: ``manage.py prune_artifacts`` keeps the artifact store bounded: by age, then by total size,
the oldest first; results keep their references (docs/artifacts.md)."""
from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from dashboard.results.artifacts import artifact_path, artifact_store
from dashboard.results.models import Artifact

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def store(settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"


def stored(days_old: float, size: int) -> str:
    body = gzip.compress(f"{days_old}".encode() * size, mtime=0)[:size].ljust(size, b"\0")
    sha = hashlib.sha256(body).hexdigest()
    artifact_store(source=io.BytesIO(body), sha256=sha, name=f"{days_old}.gz")
    Artifact.objects.filter(pk=sha).update(stored_at=timezone.now() - dt.timedelta(days=days_old))
    return sha


def left() -> list[str]:
    return sorted(Artifact.objects.values_list("name", flat=True))


def test_prune_by_age_then_by_total_size(capsys, settings):
    settings.ARTIFACT_ORPHAN_HOURS = 1e6  # by age and size alone: no result references these
    shas = {days: stored(days, 1000) for days in (40, 20, 10, 2, 1)}
    call_command("prune_artifacts", "--older-than-days", "30")
    assert left() == ["1.gz", "10.gz", "2.gz", "20.gz"]
    assert "pruned 1 artifacts (1000 bytes); kept 4 (4000 bytes)" in capsys.readouterr().out
    assert not artifact_path(shas[40]).exists() and artifact_path(shas[20]).exists()
    call_command("prune_artifacts", "--max-total-bytes", "2500")  # the two newest fit
    assert left() == ["1.gz", "2.gz"]
    assert not artifact_path(shas[10]).exists() and artifact_path(shas[1]).exists()
    call_command("prune_artifacts", "--older-than-days", "1.5", "--max-total-bytes", "0")
    assert left() == [] and not artifact_path(shas[1]).exists()


def test_prune_without_a_bound_is_a_usage_error():
    with pytest.raises(CommandError, match="--older-than-days, --max-total-bytes") as raised:
        call_command("prune_artifacts")
    assert raised.value.returncode == 2


def test_the_admin_lists_artifacts_read_only(admin_client):
    sha = stored(3, 500)
    listing = admin_client.get("/admin/results/artifact/", {"q": "3.gz"}).content.decode()
    assert "3.gz" in listing and sha in listing
    assert admin_client.get(f"/admin/results/artifact/{sha}/change/").status_code == 200
    # Deleting a row there would leave its file: only prune_artifacts deletes (both at once).
    assert admin_client.get(f"/admin/results/artifact/{sha}/delete/").status_code == 403
    assert admin_client.get("/admin/results/artifact/add/").status_code == 403
    assert artifact_path(sha).exists()


def test_room_is_made_from_junk_first_and_expired_junk_goes(capsys):
    """Issue #46 item 10: --max-total-bytes deleted a referenced trace and kept newer junk (uploads no
    result references). Junk goes first, oldest first; junk past ARTIFACT_ORPHAN_HOURS goes anyway."""
    from dashboard.results.services import run_ingest
    from tests.documents import make_document, make_result

    referenced = {days: stored(days, 1000) for days in (5, 4)}
    junk = [stored(days, 1000) for days in (0.01, 0.02)]
    results = [make_result("mlp_loop", regime) for regime in ("static", "backed")]
    for result, (days, sha) in zip(results, referenced.items()):
        result["artifact"] = {"kind": "torch_trace", "name": f"{days}.gz", "sha256": sha, "size_bytes": 1000}
    run_ingest(document=make_document(results=results))
    call_command("prune_artifacts", "--max-total-bytes", "2500")
    assert left() == ["4.gz", "5.gz"] and not any(artifact_path(sha).exists() for sha in junk)  # newer than either trace
    call_command("prune_artifacts", "--max-total-bytes", "1500")
    assert left() == ["4.gz"]  # then the oldest referenced
    old_junk = stored(30 / 24, 1000)
    call_command("prune_artifacts", "--older-than-days", "100")
    assert left() == ["4.gz"] and not artifact_path(old_junk).exists()
