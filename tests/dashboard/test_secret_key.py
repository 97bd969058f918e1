"""Issue #33 item 6: with DEBUG off the settings refuse an empty or publicly known secret key (the
development key, a startproject key, a placeholder) with a clear message, in a real child process
as gunicorn or the Celery worker would load them; a key of its own starts."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = __file__.rsplit("/tests/", 1)[0]
SETUP = "import django; django.setup(); from django.conf import settings; print('started', settings.DEBUG)"


def start(*, debug: str, key: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SECRET_KEY", "DJANGO_DEBUG")}
    env.update(DJANGO_SETTINGS_MODULE="dashboard.settings", DJANGO_DEBUG=debug)
    if key is not None:
        env["DJANGO_SECRET_KEY"] = key
    return subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("key", ["dev-only-insecure-key", "", "   ", "change-me", "django-insecure-0123456789abcdef"])
def test_debug_off_refuses_an_empty_or_known_secret_key(key):
    done = start(debug="false", key=key)
    assert done.returncode != 0 and "started" not in done.stdout
    assert "ImproperlyConfigured: DJANGO_SECRET_KEY is empty or a publicly known key, refused with DJANGO_DEBUG=false" \
        in done.stderr, done.stderr[-2000:]


def test_debug_off_starts_with_a_key_of_its_own_and_debug_on_keeps_the_development_key():
    done = start(debug="false", key="a-long-random-production-key-" + "q7Zx" * 10)
    assert done.returncode == 0 and done.stdout.strip() == "started False", done.stderr[-2000:]
    done = start(debug="true", key=None)  # development: the built-in key is fine
    assert done.returncode == 0 and done.stdout.strip() == "started True", done.stderr[-2000:]
