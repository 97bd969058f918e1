"""Sign-in throttling (the admin's login page is the dashboard's one sign-in page): after
``LOGIN_THROTTLE_FAILURES`` failed sign-ins within ``LOGIN_THROTTLE_WINDOW_S`` from one address
(whatever the user names), or for one user name from one address, further tries from that address
are answered 429 with ``Retry-After`` until the window has passed (a success clears both counts).
Counts are per client address: a stranger's wrong passwords never lock an account out for its
owner, who signs in from elsewhere (#33). Counts live in the ``throttle`` cache: Redis when the broker is Redis,
shared by every web process. The cache unreachable, sign-in is not throttled (and it is logged)."""
from __future__ import annotations

import hashlib
import logging
import time

from django.conf import settings
from django.core.cache import caches

log = logging.getLogger(__name__)


def _keys(*, ip: str, username: str) -> list[str]:
    keys = [f"login-fail:ip:{ip}"]
    if username:
        keys.append("login-fail:ip-user:" + hashlib.sha256(f"{ip}\n{username.lower()}".encode()).hexdigest()[:32])
    return keys


def login_retry_after(*, ip: str, username: str) -> int | None:
    """Seconds to wait before another try from ``ip`` or for ``username``; None when one may try now."""
    try:
        found = caches["throttle"].get_many(_keys(ip=ip, username=username))
    except Exception:  # noqa: BLE001 (a cache down must not stop sign-in)
        log.exception("login throttle: cache unreachable")
        return None
    locked = [first for count, first in found.values() if count >= settings.LOGIN_THROTTLE_FAILURES]
    if not locked:
        return None
    return max(1, int(min(locked) + settings.LOGIN_THROTTLE_WINDOW_S - time.time()))


def login_failed(*, ip: str, username: str) -> None:
    """Count one failed sign-in from ``ip`` for ``username``; the window starts at the first."""
    window = settings.LOGIN_THROTTLE_WINDOW_S
    cache = caches["throttle"]
    try:
        for key in _keys(ip=ip, username=username):
            count, first = cache.get(key) or (0, time.time())
            cache.set(key, (count + 1, first), timeout=max(1, int(first + window - time.time())))
    except Exception:  # noqa: BLE001
        log.exception("login throttle: cache unreachable")


def login_cleared(*, ip: str, username: str) -> None:
    try:
        caches["throttle"].delete_many(_keys(ip=ip, username=username))
    except Exception:  # noqa: BLE001
        log.exception("login throttle: cache unreachable")


def client_ip(request) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def on_login_failed(sender, credentials, request=None, **kwargs) -> None:
    if request is not None:
        login_failed(ip=client_ip(request), username=str(credentials.get("username") or ""))


def on_logged_in(sender, request, user, **kwargs) -> None:
    if request is not None:
        login_cleared(ip=client_ip(request), username=user.get_username())
