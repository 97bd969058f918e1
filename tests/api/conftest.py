"""API test fixtures: a DRF client, write and read-only tokens, small build histories."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from dashboard.api.services import api_token_create


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def secret(db) -> str:
    """A write token's secret (CI system "ci")."""
    return api_token_create(name="ci")[1]


@pytest.fixture
def writer(secret) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def fields(response) -> list:
    """The fields named by an error response (and a check that it has the documented shape)."""
    data = response.json()
    assert data["status"] == response.status_code and data["detail"] == data["errors"][0]["message"], data
    return [e["field"] for e in data["errors"]]
