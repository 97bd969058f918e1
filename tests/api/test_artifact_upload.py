"""#34 / #30 item 2: ``PUT /api/v1/artifacts/<sha256>/``, the workers' upload of a case's kept trace,
and ``/artifacts/<sha256>/``, its download: a token, size limits, 4xx naming the field, all or
nothing, and the file served as data (an attachment), never rendered (docs/artifacts.md)."""
from __future__ import annotations

import gzip
import hashlib

import pytest
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create
from dashboard.results.models import Artifact
from tests.fixtures.api import fields

pytestmark = [pytest.mark.services, pytest.mark.django_db]

# A trace that, opened in a browser, would run script: it must only ever be downloaded.
BODY = gzip.compress(b'<html><script>alert("x")</script></html>\n', mtime=0)
SHA = hashlib.sha256(BODY).hexdigest()


@pytest.fixture(autouse=True)
def store(settings, tmp_path):
    settings.ARTIFACT_ROOT = tmp_path / "store"
    return tmp_path / "store"


def put(client, sha=SHA, body=BODY, name="case.torch_trace.log.gz", content_type="application/gzip"):
    url = f"/api/v1/artifacts/{sha}/" + (f"?name={name}" if name is not None else "")
    return client.put(url, data=body, content_type=content_type)


def files(store) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file()) if store.exists() else []


def test_an_upload_is_stored_by_its_sha256_once(writer, store):
    response = put(writer)
    assert response.status_code == 201, response.json()
    assert response.json() == {"sha256": SHA, "name": "case.torch_trace.log.gz", "size_bytes": len(BODY), "created": True,
                               "download": f"/artifacts/{SHA}/"}
    assert files(store) == [f"{SHA[:2]}/{SHA}"] and (store / SHA[:2] / SHA).read_bytes() == BODY
    again = put(writer)
    assert again.status_code == 200 and again.json()["created"] is False
    assert Artifact.objects.count() == 1 and files(store) == [f"{SHA[:2]}/{SHA}"]


@pytest.mark.parametrize("case, expected_status, field", [
    ({"sha": "abc"}, 400, "sha256"),
    ({"sha": SHA.upper()}, 400, "sha256"),
    ({"sha": "0" * 64}, 400, "sha256"),  # the body is not that file
    ({"name": None}, 400, "name"),
    ({"name": "../../etc/passwd"}, 400, "name"),
    ({"content_type": "text/html"}, 415, "Content-Type"),
    ({"body": b"plain text", "sha": hashlib.sha256(b"plain text").hexdigest()}, 400, "body"),
])
def test_a_bad_upload_is_refused_naming_the_field_and_leaves_nothing(writer, store, case, expected_status, field):
    response = put(writer, **case)
    assert response.status_code == expected_status and fields(response) == [field], response.json()
    assert not Artifact.objects.exists() and files(store) == []


def test_an_upload_over_the_limit_is_413_and_leaves_nothing(writer, store, settings):
    settings.ARTIFACT_MAX_BYTES = len(BODY) - 1
    response = put(writer)
    assert response.status_code == 413 and fields(response) == ["body"]
    assert not Artifact.objects.exists() and files(store) == []


def test_uploads_need_a_write_token(api, store):
    assert put(api).status_code == 401
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name='dash', can_write=False)[1]}")
    assert put(reader).status_code == 403
    assert files(store) == []


def test_the_download_is_an_attachment_never_rendered(writer, client):
    put(writer)
    response = client.get(f"/artifacts/{SHA}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"] == 'attachment; filename="case.torch_trace.log.gz"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")
    assert b"".join(response.streaming_content) == BODY


def test_a_download_of_no_stored_file_is_404(client, store):
    assert client.get(f"/artifacts/{SHA}/").status_code == 404
    assert client.get("/artifacts/..%2F..%2Fetc%2Fpasswd/").status_code == 404
    Artifact.objects.create(pk=SHA, name="gone.gz", size_bytes=1)  # a row whose file went away
    assert client.get(f"/artifacts/{SHA}/").status_code == 404


def test_a_gzip_bomb_is_refused_naming_it(writer, store, settings):
    """Issue #46 item 10: a gzip bomb was stored and the page said to gunzip it. Past
    ARTIFACT_MAX_EXPANDED_BYTES, or ARTIFACT_MAX_RATIO times its size, it is a 413 naming the body."""
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9, mtime=0)  # 64 MiB in about 64 KiB
    response = put(writer, sha=hashlib.sha256(bomb).hexdigest(), body=bomb)
    assert response.status_code == 413 and fields(response) == ["body"] and "gzip bomb" in response.json()["detail"]
    settings.ARTIFACT_MAX_EXPANDED_BYTES = 1000
    big = gzip.compress(bytes(range(256)) * 8, mtime=0)  # 2 KiB, within the ratio, past the bound
    response = put(writer, sha=hashlib.sha256(big).hexdigest(), body=big)
    assert response.status_code == 413 and "ARTIFACT_MAX_EXPANDED_BYTES 1000" in response.json()["detail"]
    cut = BODY[:-6]
    response = put(writer, sha=hashlib.sha256(cut).hexdigest(), body=cut)
    assert response.status_code == 400 and fields(response) == ["body"] and "gzip" in response.json()["detail"]
    assert files(store) == [] and not Artifact.objects.exists()


def test_uploads_no_result_references_are_bounded(writer, settings):
    """Issue #46 item 10: uploads no result references were kept without quota."""
    others = [gzip.compress(f"trace {i}".encode(), mtime=0) for i in range(3)]
    settings.ARTIFACT_UNREFERENCED_MAX_BYTES = len(BODY) + len(others[0]) + 1
    assert put(writer).status_code == 201
    assert put(writer, sha=hashlib.sha256(others[0]).hexdigest(), body=others[0]).status_code == 201
    refused = put(writer, sha=hashlib.sha256(others[1]).hexdigest(), body=others[1])
    assert refused.status_code == 429 and fields(refused) == ["body"] and "ARTIFACT_UNREFERENCED_MAX_BYTES" in refused.json()["detail"]
    assert put(writer).status_code == 200  # the same bytes again store nothing: not refused


def gz(i: int) -> tuple[str, bytes]:
    body = gzip.compress(bytes([i]) * 64, mtime=0)  # all the same size
    return hashlib.sha256(body).hexdigest(), body


def test_one_token_at_its_bound_does_not_lock_others_out(writer, settings):
    """Issue #46 item 10: the bound on uploads no result references was store-wide only, so one
    token could fill it and every other token's uploads were refused. Each token has its own bound
    (ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN); another token still uploads."""
    size = len(gz(0)[1])
    assert {len(gz(i)[1]) for i in range(8)} == {size}
    settings.ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN = 2 * size
    settings.ARTIFACT_UNREFERENCED_MAX_BYTES = 10 * size
    assert [put(writer, *gz(i)[:1], body=gz(i)[1]).status_code for i in range(2)] == [201, 201]
    refused = put(writer, gz(2)[0], body=gz(2)[1])
    assert refused.status_code == 429 and fields(refused) == ["body"], refused.json()
    assert "ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN" in refused.json()["detail"]
    assert put(writer, gz(0)[0], body=gz(0)[1]).status_code == 200  # bytes stored already: no new upload
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(name='other-ci')[1]}")
    assert put(other, gz(3)[0], body=gz(3)[1]).status_code == 201
    assert Artifact.objects.count() == 3


def uploads_at_once(secrets: list[str]) -> list[int]:
    """Upload ``gz(i)`` with ``secrets[i]``, all at once (a thread and a connection each): the
    status codes, sorted."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    def upload(i: int) -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {secrets[i]}")
        try:
            return put(client, gz(i)[0], body=gz(i)[1]).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(len(secrets)) as pool:
        return sorted(pool.map(upload, range(len(secrets))))


@pytest.mark.django_db(transaction=True)
def test_a_tokens_concurrent_uploads_cannot_pass_its_bound_together(secret, settings, tmp_path):
    """Counted with the token's row locked: eight uploads at once, room for two, two stored."""
    size = len(gz(0)[1])
    assert {len(gz(i)[1]) for i in range(8)} == {size}
    settings.ARTIFACT_UNREFERENCED_MAX_BYTES_PER_TOKEN = 2 * size
    assert uploads_at_once([secret] * 8) == [201, 201] + [429] * 6 and Artifact.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_of_many_tokens_cannot_pass_the_store_wide_bound_together(settings):
    """The store-wide bound (ARTIFACT_UNREFERENCED_MAX_BYTES) was counted under each token's own row
    lock only: uploads of different tokens at once each saw room and passed it together (about one
    upload per token over). Eight tokens upload at once, room for two: two stored."""
    size = len(gz(0)[1])
    assert {len(gz(i)[1]) for i in range(8)} == {size}
    settings.ARTIFACT_UNREFERENCED_MAX_BYTES = 2 * size
    secrets = [api_token_create(name=f"ci-{i}")[1] for i in range(8)]
    assert uploads_at_once(secrets) == [201, 201] + [429] * 6 and Artifact.objects.count() == 2
