"""``manage.py local_admin``: the quick start's account for triage, Bisect and alerts (issue #42 item
10). Creates the superuser ``admin`` with a random password, written to ``data/local-admin.txt``
(readable by its owner only), when no superuser exists; prints how to sign in either way. For a
laptop's SQLite database: a deployment makes its accounts with ``createsuperuser`` (docs/deploying.md)."""
from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create a local superuser 'admin' with a random password (data/local-admin.txt) unless one exists; print how to sign in."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the dashboard's address, for the sign-in link")

    def handle(self, *args, url: str, **options):
        users = get_user_model().objects
        secret_file = settings.DATA_DIR / "local-admin.txt"
        login = f"{url.rstrip('/')}/admin/login/"
        if not users.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            users.create_superuser(USERNAME, "", password)
            secret_file.parent.mkdir(parents=True, exist_ok=True)
            secret_file.write_text(f"{USERNAME}\n{password}\n", encoding="utf-8")
            os.chmod(secret_file, 0o600)
        if secret_file.is_file() and users.filter(username=USERNAME, is_superuser=True).exists():
            name, password = secret_file.read_text(encoding="utf-8").split()[:2]
            self.stdout.write(f"sign in at {login} as {name}, password {password} (kept in {secret_file})")
        else:
            self.stdout.write(f"sign in at {login} with your superuser account "
                              "(python manage.py changepassword NAME resets a password)")
