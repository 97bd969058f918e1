"""``manage.py ingest`` and the settings, run as real processes the way users run them."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dashboard.results.models import Result, Run
from tests.documents import make_document

ROOT = __file__.rsplit("/tests/", 1)[0]


def manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.services  # the child process must see the test database: PostgreSQL
@pytest.mark.django_db(transaction=True)
def test_ingest_command_stores_good_files_and_names_the_bad_field(tmp_path, subprocess_env):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    document = make_document()
    good.write_text(json.dumps(document))
    broken = make_document()
    broken["results"][3]["config"]["shape_regime"] = "wobbly"
    bad.write_text(json.dumps(broken))

    done = manage("ingest", str(good), str(bad), env=subprocess_env)

    assert done.returncode == 1
    assert f"stored run {document['run']['id']} (6 results new" in done.stdout
    assert "bad.json: results[3].config.shape_regime: 'wobbly' is not one of" in done.stderr
    assert Run.objects.count() == 1
    assert Result.objects.count() == 6

    again = manage("ingest", str(good), env=subprocess_env)
    assert again.returncode == 0 and "already stored" in again.stdout
    assert Result.objects.count() == 6


def test_ingest_command_reports_a_missing_file(tmp_path, subprocess_env):
    done = manage("ingest", str(tmp_path / "missing.json"), env=subprocess_env)
    assert done.returncode == 1 and "missing.json: cannot read" in done.stderr


def _settings_in_child(env: dict, expression: str) -> str:
    code = f"import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'dashboard.settings'); django.setup(); from django.conf import settings; print({expression})"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_with_nothing_set_sqlite_in_the_data_folder_and_tasks_in_process(tmp_path, subprocess_env):
    env = {k: v for k, v in subprocess_env.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_"))}
    env["PTBENCH_DATA_DIR"] = str(tmp_path / "data")
    out = _settings_in_child(env, "settings.DATABASES['default']['ENGINE'], settings.DATABASES['default']['NAME'], settings.CELERY_TASK_ALWAYS_EAGER")
    assert out == f"django.db.backends.sqlite3 {tmp_path / 'data' / 'ptbench.sqlite3'} True"


def test_database_url_and_broker_switch_to_postgres_and_redis(subprocess_env):
    env = dict(subprocess_env, DATABASE_URL="postgres://u:p@127.0.0.1:5999/db", CELERY_BROKER_URL="redis://127.0.0.1:6999/0")
    out = _settings_in_child(env, "settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL, settings.CELERY_TASK_ALWAYS_EAGER")
    assert out == "django.db.backends.postgresql redis://127.0.0.1:6999/0 False"


def test_check_deploy_is_clean_with_production_variables(subprocess_env):
    env = dict(
        subprocess_env,
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="k" * 20 + "-production-secret-that-is-long-and-random-" + "x9!Q" * 5,
        DJANGO_ALLOWED_HOSTS="bench.example.com",
    )
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


def test_production_refuses_to_start_without_a_secret_key(subprocess_env):
    env = {k: v for k, v in subprocess_env.items() if k != "DJANGO_SECRET_KEY"}
    env["DJANGO_DEBUG"] = "false"
    done = manage("check", env=env)
    assert done.returncode != 0 and "DJANGO_SECRET_KEY" in done.stderr
