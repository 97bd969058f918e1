"""The quick start makes a local admin and says how to sign in (#42 item 10); the pages link "sign in"."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def local_admin(**options) -> str:
    out = io.StringIO()
    call_command("local_admin", stdout=out, **options)
    return out.getvalue().strip()


def test_a_local_admin_with_a_random_password_and_how_to_sign_in(settings, tmp_path, client):
    settings.DATA_DIR = tmp_path
    said = local_admin()
    secret = tmp_path / "local-admin.txt"
    name, password = secret.read_text().split()
    assert said == f"sign in at http://127.0.0.1:8000/admin/login/ as admin, password {password} (kept in {secret})"
    assert oct(secret.stat().st_mode & 0o777) == "0o600" and len(password) >= 16
    assert local_admin() == said and get_user_model().objects.count() == 1  # run again: the same account
    assert client.login(username=name, password=password)
    assert 'id="signed-in">signed in as admin<' in client.get("/regressions/").content.decode()


def test_with_a_superuser_of_ones_own_it_makes_none(settings, tmp_path, client):
    settings.DATA_DIR = tmp_path
    get_user_model().objects.create_superuser("ops", "", "a-long-password")
    assert "with your superuser account" in local_admin(url="http://dash.example")
    assert get_user_model().objects.count() == 1 and not (tmp_path / "local-admin.txt").exists()
    page = client.get("/compare/").content.decode()
    assert 'id="sign-in"' in page and "/admin/login/?next=/compare/" in page
