"""Putting a message on the wire: email through Django's mail framework (SMTP settings from the
environment), Slack through an incoming webhook (JSON POST with a timeout). Each raises
``SendFailure`` saying what went wrong and whether trying again may help."""
from __future__ import annotations

import http.client
import ipaddress
import json
import smtplib
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection


@dataclass
class SendFailure(Exception):
    outcome: str  # a DeliveryAttempt.Outcome value
    error: str
    retryable: bool
    http_status: int | None = None
    smtp_code: int | None = None

    def __str__(self) -> str:
        return self.error


def email_send(*, to: list[str], subject: str, text: str, html: str) -> None:
    message = EmailMultiAlternatives(subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL, to=to,
                                     connection=get_connection(fail_silently=False))
    message.attach_alternative(html, "text/html")
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        raise SendFailure("smtp_error", f"recipients refused: {_recipients(exc.recipients)}",
                          retryable=all(400 <= c < 500 for c in codes), smtp_code=codes[0] if codes else None) from exc
    except smtplib.SMTPResponseException as exc:  # sender refused, data refused, auth failed, ...
        text = exc.smtp_error.decode(errors="replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        raise SendFailure("smtp_error", f"SMTP {exc.smtp_code}: {text}", retryable=400 <= exc.smtp_code < 500,
                          smtp_code=exc.smtp_code) from exc
    except TimeoutError as exc:
        raise SendFailure("timeout", f"SMTP server {settings.EMAIL_HOST}:{settings.EMAIL_PORT} timed out", retryable=True) from exc
    except (smtplib.SMTPException, OSError) as exc:  # disconnected, refused, TLS, DNS
        raise SendFailure("connection_error", f"SMTP server {settings.EMAIL_HOST}:{settings.EMAIL_PORT}: {exc}",
                          retryable=True) from exc


def _recipients(refused: dict) -> str:
    return "; ".join(f"{address} ({code} {msg.decode(errors='replace') if isinstance(msg, bytes) else msg})"
                     for address, (code, msg) in refused.items())


def webhook_address_problem(url: str, *, unresolved_ok: bool) -> str | None:
    """Why the dashboard may not POST to ``url``: its host is, or resolves to, an address of this
    machine or of a private network (loopback, private, link-local, reserved), which a webhook
    would let a signed-in user probe. ``ALERTS_ALLOW_PRIVATE_WEBHOOKS`` allows them (a local
    recorder). A host that does not resolve is a problem only unless ``unresolved_ok``."""
    if settings.ALERTS_ALLOW_PRIVATE_WEBHOOKS:
        return None
    host = urlsplit(url).hostname
    if not host:
        return "the URL has no host"
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError):
        return None if unresolved_ok else f"{host} does not resolve"
    for address in sorted(addresses):
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_multicast or ip.is_unspecified:
            return f"{host} is a loopback or private address ({ip}); webhooks must be public"
    return None


def slack_post(*, url: str, payload: dict) -> None:
    """POST the Block Kit payload; Slack answers 200 ``ok``. 429 and 5xx are worth a retry, other
    4xx (a revoked or mistyped webhook, a payload Slack refuses) are not. A webhook on a private
    address (``webhook_address_problem``, checked again now: DNS may have changed) is refused."""
    if problem := webhook_address_problem(url, unresolved_ok=True):
        raise SendFailure("connection_error", f"refused: {problem}", retryable=False)
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",  # noqa: S310 (a configured https webhook)
                                     headers={"Content-Type": "application/json; charset=utf-8"})
    timeout = settings.ALERTS_HTTP_TIMEOUT_S
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) only: Subscription.clean)
            response.read(65536)
    except urllib.error.HTTPError as exc:
        body = exc.read(300).decode(errors="replace").strip()
        raise SendFailure("http_error", f"HTTP {exc.code}" + (f": {body}" if body else ""),
                          retryable=exc.code == 429 or exc.code >= 500, http_status=exc.code) from exc
    except TimeoutError as exc:
        raise SendFailure("timeout", f"no answer within {timeout:g} s", retryable=True) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise SendFailure("timeout", f"no answer within {timeout:g} s", retryable=True) from exc
        raise SendFailure("connection_error", f"{exc.reason}", retryable=True) from exc
    except (OSError, http.client.HTTPException) as exc:  # reset, or not HTTP, while reading the answer
        raise SendFailure("connection_error", str(exc), retryable=True) from exc
