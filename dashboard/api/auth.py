"""Token authentication: ``Authorization: Token <secret>`` (or ``Bearer <secret>``).

No header: anonymous, which may read (unless ``API_READS_REQUIRE_TOKEN``) and may not write. A
header that is malformed, unknown or revoked is refused with 401 even on reads, so a CI job with a
wrong secret finds out at once. A read-only token that tries to write gets 403.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from rest_framework import authentication, exceptions, permissions

from dashboard.api.models import ApiToken
from dashboard.api.quotas import writes_count
from dashboard.api.services import api_token_touch, token_hash

HEADER = "Authorization"
SCHEMES = ("token", "bearer")
HOW = "send the header 'Authorization: Token <secret>' with a token created in the admin (API tokens)"


@dataclass(frozen=True)
class TokenUser:
    """``request.user`` for a request made with a token: the CI system the token belongs to."""

    token: ApiToken
    is_authenticated: bool = True
    is_anonymous: bool = False

    @property
    def name(self) -> str:
        return self.token.name

    def __str__(self) -> str:
        return f"token:{self.token.name}"


class TokenAuthFailed(exceptions.AuthenticationFailed):
    field = HEADER


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, secret = header.strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() not in SCHEMES or not secret or " " in secret:
            raise TokenAuthFailed("malformed Authorization header: expected 'Token <secret>' or 'Bearer <secret>'")
        token = ApiToken.objects.filter(key_hash=token_hash(secret)).first()
        if token is None:
            raise TokenAuthFailed("unknown token: check the secret (it is shown once, when the token is created in the admin)")
        if token.revoked_at is not None:
            raise TokenAuthFailed(f"token {token.prefix}… ({token.name}) was revoked at {token.revoked_at:%Y-%m-%d %H:%M} UTC")
        api_token_touch(token=token)
        return TokenUser(token=token), token

    def authenticate_header(self, request) -> str:
        return 'Token realm="ptbench API"'  # makes refusals 401 (with WWW-Authenticate), not 403


class ReadOpenWriteToken(permissions.BasePermission):
    """Reads: anyone (or any valid token with ``API_READS_REQUIRE_TOKEN``). Writes: a write token."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        authenticated = isinstance(user, TokenUser)
        if request.method in permissions.SAFE_METHODS:
            if settings.API_READS_REQUIRE_TOKEN and not authenticated:
                raise exceptions.NotAuthenticated(f"this server requires a token for reads: {HOW}")
            return True
        if not authenticated:
            raise exceptions.NotAuthenticated(f"writes need a token: {HOW}")
        if not user.token.can_write:
            raise exceptions.PermissionDenied(f"token {user.token.prefix}… ({user.token.name}) is read-only")
        writes_count(token=user.token)  # 429 past API_TOKEN_WRITES_PER_MINUTE (issue #46)
        return True


def token_of(request) -> ApiToken | None:
    """The token a request was made with (what owns the runs it creates), or None."""
    return request.user.token if isinstance(request.user, TokenUser) else None


def actor(request) -> str:
    """Who did a write, for ``requested_by`` / ``status_changed_by``: the token's CI system."""
    user = request.user
    return f"api:{user.name}" if isinstance(user, TokenUser) else "api:anonymous"
