"""Tokens: open reads, token writes, clear 401/403 messages, stored hashed, revocable, admin."""
from __future__ import annotations

import hashlib
import re

import pytest
from rest_framework.test import APIClient

from dashboard.api.models import ApiToken
from dashboard.api.services import api_token_create, api_token_revoke
from tests.fixtures.api import fields

pytestmark = pytest.mark.django_db
BUILD = {"torch_version": "2.13.0", "git_sha": "abcdef1234567"}


def client_with(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_reads_are_open_and_writes_need_a_token(api):
    assert api.get("/api/v1/builds/").status_code == 200
    response = api.post("/api/v1/builds/", BUILD, format="json")
    assert response.status_code == 401
    assert fields(response) == ["Authorization"]
    assert "writes need a token" in response.json()["detail"]
    assert response["WWW-Authenticate"].startswith("Token")


@pytest.mark.parametrize("scheme", ["Token", "Bearer", "token"])
def test_a_write_token_writes_with_either_scheme(scheme, secret):
    response = client_with(f"{scheme} {secret}").post("/api/v1/builds/", BUILD, format="json")
    assert response.status_code == 201, response.json()


@pytest.mark.parametrize("header, message", [
    ("Token ptb_not-a-real-secret", "unknown token"),
    ("Basic dXNlcjpwYXNz", "malformed Authorization header"),
    ("Token", "malformed Authorization header"),
    ("Token a b", "malformed Authorization header"),
])
def test_a_wrong_token_is_refused_even_on_reads(header, message, db):
    for response in (client_with(header).get("/api/v1/builds/"), client_with(header).post("/api/v1/builds/", BUILD, format="json")):
        assert response.status_code == 401
        assert fields(response) == ["Authorization"] and message in response.json()["detail"]


def test_a_revoked_token_is_refused(secret):
    token = ApiToken.objects.get(name="ci")
    assert api_token_revoke(token_ids=[token.id]) == 1
    assert api_token_revoke(token_ids=[token.id]) == 0  # idempotent
    response = client_with(f"Token {secret}").post("/api/v1/builds/", BUILD, format="json")
    assert response.status_code == 401 and "revoked" in response.json()["detail"]


def test_a_read_only_token_reads_but_may_not_write(db):
    _, secret = api_token_create(name="dashboards", can_write=False)
    client = client_with(f"Token {secret}")
    assert client.get("/api/v1/builds/").status_code == 200
    response = client.post("/api/v1/builds/", BUILD, format="json")
    assert response.status_code == 403 and fields(response) == ["Authorization"] and "read-only" in response.json()["detail"]


def test_reads_can_require_a_token(settings, api, secret):
    settings.API_READS_REQUIRE_TOKEN = True
    response = api.get("/api/v1/results/")
    assert response.status_code == 401 and "requires a token for reads" in response.json()["detail"]
    assert client_with(f"Bearer {secret}").get("/api/v1/results/").status_code == 200


def test_only_a_hash_is_stored_and_use_is_recorded(secret):
    token = ApiToken.objects.get(name="ci")
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {str(v) for v in ApiToken.objects.values_list("name", "prefix", "key_hash", "note").get()}
    assert secret.startswith(token.prefix) and len(secret) > len(token.prefix) + 30
    assert token.last_used_at is None
    client_with(f"Token {secret}").get("/api/v1/builds/")
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_the_admin_shows_the_secret_once_and_revokes(admin_client):
    response = admin_client.post("/admin/api/apitoken/add/", {"name": "nightly-gha", "can_write": "on", "note": ""}, follow=True)
    assert response.status_code == 200
    secret = re.search(r'id="api-token-secret">([^<]+)<', response.content.decode()).group(1)
    token = ApiToken.objects.get(name="nightly-gha")
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert client_with(f"Token {secret}").post("/api/v1/builds/", BUILD, format="json").status_code == 201
    change = admin_client.get(f"/admin/api/apitoken/{token.pk}/change/").content.decode()
    assert secret not in change  # never shown again
    admin_client.post("/admin/api/apitoken/", {"action": "revoke", "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert client_with(f"Token {secret}").post("/api/v1/builds/", BUILD, format="json").status_code == 401
