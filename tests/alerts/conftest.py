from __future__ import annotations

import pytest

from tests.alerts.servers import SlackServer, SmtpServer


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on loopback, and the settings that send mail to it."""
    server = SmtpServer()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", server.port, False
    settings.DEFAULT_FROM_EMAIL = "ptbench@bench.test"
    yield server
    server.close()


@pytest.fixture
def slack_server():
    servers = []

    def start(script=(), *, hold_s: float = 3.0) -> SlackServer:
        servers.append(SlackServer(script, hold_s=hold_s))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(autouse=True)
def alert_settings(settings):
    settings.PTBENCH_BASE_URL = "https://bench.test"
    settings.ALERTS_HTTP_TIMEOUT_S = 0.5
    settings.ALERTS_RETRY_COUNTDOWNS_S = [0.05, 0.05]
    settings.ALERTS_ALLOW_PRIVATE_WEBHOOKS = True  # the local Slack recorder is on loopback
    return settings
