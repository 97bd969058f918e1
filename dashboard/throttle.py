"""Sign-in throttling (the admin's login page is the dashboard's one sign-in page): at most
``LOGIN_THROTTLE_FAILURES`` passwords are checked within ``LOGIN_THROTTLE_WINDOW_S`` from one
address (whatever the user names), and for one user name from one address, unless one succeeds;
further tries are answered 429 with ``Retry-After`` until the window has passed, the password not
checked. A try is counted *before* its password is checked, in one atomic step (Redis INCR), so
15 concurrent wrong passwords get at most the limit checked (#46 item 11: the check and the count
were two steps and 7 of 15 were checked); a success clears both counts.

Counts are per client address: a stranger's wrong passwords never lock an account out for its
owner, who signs in from elsewhere (#33). The client address is ``REMOTE_ADDR``, or behind a proxy
listed in ``PTBENCH_TRUSTED_PROXIES`` the address that proxy forwarded (``client_ip``). Counts live
in the ``throttle`` cache: Redis when the broker is Redis, shared by every web process. The cache
unreachable, sign-in is not throttled (and it is logged)."""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import time

from django.conf import settings
from django.core.cache import caches

log = logging.getLogger(__name__)


def _keys(*, ip: str, username: str) -> list[str]:
    keys = [f"login-try:ip:{ip}"]
    if username:
        keys.append("login-try:ip-user:" + hashlib.sha256(f"{ip}\n{username.lower()}".encode()).hexdigest()[:32])
    return keys


def login_attempt(*, ip: str, username: str) -> int | None:
    """Count one sign-in try from ``ip`` for ``username`` before its password is checked. Seconds
    to wait when this try is past the limit (its password must not be checked); None otherwise.
    The window starts at the first try; each count is one atomic increment of its key."""
    window, limit = settings.LOGIN_THROTTLE_WINDOW_S, settings.LOGIN_THROTTLE_FAILURES
    cache = caches["throttle"]
    try:
        over = False
        for key in _keys(ip=ip, username=username):  # the next key only counts tries within the first's limit
            if over:
                break
            cache.add(key + ":first", time.time(), timeout=window)
            cache.add(key, 0, timeout=window)  # a no-op when the window's count exists
            try:
                count = cache.incr(key)
            except ValueError:  # expired between add and incr: a new window
                cache.add(key, 1, timeout=window)
                count = 1
            over = count > limit
        if not over:
            return None
        firsts = [first for first in cache.get_many([k + ":first" for k in _keys(ip=ip, username=username)]).values()]
    except Exception:  # noqa: BLE001 (a cache down must not stop sign-in)
        log.exception("login throttle: cache unreachable")
        return None
    first = min(firsts, default=time.time())
    return max(1, min(window, int(first + window - time.time())))


def login_cleared(*, ip: str, username: str) -> None:
    keys = _keys(ip=ip, username=username)
    try:
        caches["throttle"].delete_many(keys + [k + ":first" for k in keys])
    except Exception:  # noqa: BLE001
        log.exception("login throttle: cache unreachable")


def _trusted(address: str, proxies: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for proxy in proxies:
        try:
            if ip in ipaddress.ip_network(proxy, strict=False):
                return True
        except ValueError:
            continue
    return False


def client_ip(request) -> str:
    """The client's address: ``REMOTE_ADDR``, unless that is a proxy of ``PTBENCH_TRUSTED_PROXIES``;
    then the nearest address of ``X-Forwarded-For`` (read from the right) that is not itself one of
    those proxies. A client cannot choose its own address by sending the header: without a trusted
    proxy in front it is ignored, and behind one only what that proxy appended is believed."""
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    proxies = settings.PTBENCH_TRUSTED_PROXIES
    if not proxies or not _trusted(remote, proxies):
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    for address in reversed(forwarded):
        if not _trusted(address, proxies):
            return address[:64]
    return remote


def on_logged_in(sender, request, user, **kwargs) -> None:
    if request is not None:
        login_cleared(ip=client_ip(request), username=user.get_username())
