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


@pytest.mark.django_db(transaction=True)
def test_concurrent_wrong_passwords_check_at_most_the_limit():
    """#46 item 11: the check and the count were two steps: 15 concurrent wrong passwords had 7 checked
    (limit 5). Each try is now counted in one atomic step before its password is checked."""
    import threading

    from django.db import connection

    barrier, answers = threading.Barrier(15), []

    def one(i: int) -> None:
        client = Client(REMOTE_ADDR="203.0.113.99")
        barrier.wait()
        try:
            answers.append(sign_in(client, f"wrong-{i}").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(15)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [200] * 5 + [429] * 10, (len(answers), sorted(answers))


def test_the_forwarded_address_counts_only_behind_a_trusted_proxy(settings):
    """Behind a TLS proxy every client came from the proxy's address: five failures locked everyone
    out. With the proxy named in PTBENCH_TRUSTED_PROXIES the address it forwarded is counted; a client
    that sends X-Forwarded-For itself, not through a trusted proxy, is counted by its own address."""
    settings.PTBENCH_TRUSTED_PROXIES = ["127.0.0.0/8"]
    behind = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert [sign_in(behind, f"wrong-{i}").status_code for i in range(5)] == [200] * 5
    assert sign_in(behind, "wrong-again").status_code == 429
    # Another client through the same proxy signs in; a forged header before the proxy's is ignored.
    other = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5, 198.51.100.9")
    assert sign_in(other, "right-password-1").status_code == 302
    # Not through a trusted proxy: the header is the client's own word, and its address is counted.
    direct = Client(REMOTE_ADDR="192.0.2.10")
    for i in range(5):
        direct.post("/admin/login/", {"username": "root", "password": f"w{i}"}, HTTP_X_FORWARDED_FOR=f"10.9.9.{i}")
    assert sign_in(direct, "right-password-1").status_code == 429
