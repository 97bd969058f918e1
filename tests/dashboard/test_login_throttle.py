"""Sign-in throttling (#19 item 8: 30 wrong passwords went through in 7.6 s). Under scripts/test.sh
the counts live in the real Redis (database 2), shared as between gunicorn workers."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def throttle(settings):
    settings.LOGIN_THROTTLE_FAILURES, settings.LOGIN_THROTTLE_WINDOW_S = 5, 300
    caches["throttle"].clear()
    get_user_model().objects.create_superuser("root", password="right-password-1")
    yield
    caches["throttle"].clear()


def sign_in(client: Client, password: str, username: str = "root"):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def test_wrong_passwords_are_throttled_then_even_the_right_one_waits():
    client = Client(REMOTE_ADDR="203.0.113.7")
    assert [sign_in(client, f"wrong-{i}").status_code for i in range(5)] == [200] * 5  # the form, with its error
    locked = sign_in(client, "right-password-1")
    assert locked.status_code == 429 and 250 <= int(locked["Retry-After"]) <= 300
    assert "too many failed sign-ins" in locked.content.decode()
    # The address waits whatever account it names; another address is not locked out (#33).
    assert sign_in(client, "whatever", username="someone").status_code == 429
    assert sign_in(Client(REMOTE_ADDR="198.51.100.3"), "whatever", username="someone").status_code == 200


def test_a_stranger_cannot_lock_the_owner_out():
    """#33 item 7: 5 wrong passwords for root from one address locked root out everywhere for 5 min."""
    stranger = Client(REMOTE_ADDR="203.0.113.66")
    assert [sign_in(stranger, f"wrong-{i}").status_code for i in range(5)] == [200] * 5
    assert sign_in(stranger, "right-password-1").status_code == 429
    owner = Client(REMOTE_ADDR="198.51.100.2")
    assert sign_in(owner, "wrong-once").status_code == 200  # the owner's own typo: the form again
    assert sign_in(owner, "right-password-1").status_code == 302


def test_a_success_clears_the_count():
    client = Client(REMOTE_ADDR="203.0.113.8")
    for i in range(4):
        sign_in(client, f"wrong-{i}")
    assert sign_in(client, "right-password-1").status_code == 302
    client.logout()
    assert [sign_in(client, f"wrong-{i}").status_code for i in range(4)] == [200] * 4
