"""docker-compose.yml (issue #4). This machine has no Docker engine, so the file is parsed and every
service's command is checked against the repository: the Celery apps import (the runner worker's
without Django, in a process with that service's environment), its subcommands, ``manage.py``
commands and the gunicorn WSGI module exist, the queues match ``dashboard/celery.py`` and
``contract/messages.py``, GPU workers hold no database credentials and reserve NVIDIA devices,
and every ``${VAR}`` the file uses is documented in docs/deploying.md."""
from __future__ import annotations

import functools
import importlib
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
RUNNER_APP = "runner.worker.app"
GUNICORN_CONF = "deploy/gunicorn.conf.py"
# Compose's interpolation: $$ is a literal $ (the container's shell sees it); ${VAR}, ${VAR:-default},
# ${VAR-default}, ${VAR:?message}, ${VAR?message}.
VARIABLE = re.compile(r"\$(?:\$|\{(\w+)(?:(:?[-?])([^}]*))?\})")


def interpolate(value, environ: dict[str, str]):
    """``value`` as Compose would run it with ``environ`` (here: nothing set, so the defaults)."""
    if isinstance(value, dict):
        return {key: interpolate(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, environ) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match) -> str:
        name, operator, word = match.groups()
        if name is None:
            return "$"
        current = environ.get(name)
        missing = current is None or (operator is not None and operator.startswith(":") and current == "")
        if operator and operator.endswith("?") and missing:
            raise AssertionError(f"${{{name}}} is required: {word}")
        return (word or "") if missing and operator else (current or "")

    return VARIABLE.sub(substitute, value)


@functools.cache
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())  # merge keys (<<: *anchor) resolved by the loader


def strings(value) -> list[str]:
    """Every value in the parsed file, where Compose interpolates (not its comments)."""
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return [value] if isinstance(value, str) else []


# What an operator's .env holds before the first start (docker-compose.yml's header): with DEBUG off the
# dashboard refuses an empty or publicly known key (dashboard/settings.py).
OPERATOR_ENV = {"DJANGO_SECRET_KEY": "test-" + "k" * 45}


def services() -> dict[str, dict]:
    return interpolate(compose()["services"], OPERATOR_ENV)


def commands(service: dict) -> list[list[str]]:
    """The programs a service runs: its command, or each step of an ``sh -c`` script (``a && b``)."""
    command = service.get("command")
    if not command:
        return []
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if argv[:2] != ["sh", "-c"]:
        return [argv]
    steps = []
    for step in argv[2].split("&&"):
        words = shlex.split(step)
        if words and words[0] == "exec":
            words = words[1:]
        if words and words[0] != ":":  # `: "${VAR:?message}"` only checks the environment
            steps.append(words)
    return steps


def celery_commands() -> list[tuple[str, list[str], dict]]:
    return [(name, argv, svc) for name, svc in services().items() for argv in commands(svc) if argv[0] == "celery"]


def option(argv: list[str], *names: str) -> str | None:
    for index, word in enumerate(argv):
        if word in names:
            return argv[index + 1]
    return None


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


@functools.cache
def inspect_app(app: str, env_items: tuple, absent: tuple[str, ...] = ()) -> dict:
    """Load a Celery app the way ``celery -A`` does, in a process with the service's environment
    and nothing of this test's (no DATABASE_URL, no DJANGO_SETTINGS_MODULE), where the packages in
    ``absent`` cannot be imported: its tasks and their queues, the queues it declares, its routes,
    and which of the dashboard's modules got imported."""
    probe = (
        "import json, sys\n"
        "class Absent:  # a machine without these packages installed\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in sys.argv[2:]:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r} (blocked: not on a GPU machine)', name=name)\n"
        "sys.meta_path.insert(0, Absent())\n"
        "from celery.app.utils import find_app\n"
        "app = find_app(sys.argv[1])\n"
        "app.loader.import_default_modules()\n"
        "tasks = {n: getattr(t, 'queue', None) for n, t in app.tasks.items() if not n.startswith('celery.')}\n"
        "print(json.dumps({'tasks': tasks, 'queues': [q.name for q in app.conf.task_queues or []],\n"
        "                  'routes': app.conf.task_routes or {}, 'main': app.main,\n"
        "                  'dashboard': sorted(m for m in sys.modules if m.partition('.')[0] == 'dashboard')[:3]}))\n"
    )
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": os.environ.get("HOME", "/tmp"), **dict(env_items)}
    done = subprocess.run([sys.executable, "-c", probe, app, *absent], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"celery -A {app} does not load:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def app_of(argv: list[str], service: dict, absent: tuple[str, ...] = ()) -> dict:
    app = option(argv, "-A", "--app")
    assert app, f"{argv}: no -A"
    return inspect_app(app, tuple(sorted(environment(service).items())), absent)


def test_the_file_parses_and_its_services_are_wired():
    found = services()
    for name in ("postgres", "redis", "migrate", "web", "worker", "beat", "gpu-worker"):
        assert name in found, f"service {name} is missing"
    for name, service in found.items():
        if "build" in service:
            build = service["build"] if isinstance(service["build"], dict) else {"context": service["build"]}
            dockerfile = (ROOT / build["context"] / "Dockerfile").read_text()
            assert f" AS {build.get('target', 'web')}\n" in dockerfile, f"{name}: no such stage in the Dockerfile"
        for dependency in service.get("depends_on") or {}:
            assert dependency in found, f"{name} depends on unknown service {dependency}"
        assert service.get("image") or service.get("build"), f"{name}: neither image nor build"


def test_every_manage_py_command_exists():
    from django.core.management import get_commands

    known = get_commands()
    used = [(name, argv[2]) for name, svc in services().items() for argv in commands(svc) if argv[:2] == ["python", "manage.py"]]
    assert {command for _, command in used} >= {"migrate", "collectstatic"}, used
    for name, command in used:
        assert command in known, f"{name}: manage.py {command} does not exist"


def test_web_runs_gunicorn_on_a_wsgi_application_that_exists():
    (argv,) = [a for a in commands(services()["web"]) if a[0] == "gunicorn"]
    module, _, attribute = argv[1].partition(":")
    application = getattr(importlib.import_module(module), attribute or "application")
    assert callable(application)
    assert "collectstatic" in [a[2] for a in commands(services()["web"]) if a[:2] == ["python", "manage.py"]]


def test_the_web_and_worker_limits_fit_the_largest_document():
    """Issue #46 item 3: gunicorn lets a submit of the largest legal document finish (its default 30 s
    killed one of 40,000 results into an HTML 500), and the dashboard's visibility timeout outlasts
    its tasks' hard limit (60 s under 360 s handed running detections out again)."""
    from django.conf import settings

    from contract.document import load_schema

    (argv,) = [a for a in commands(services()["web"]) if a[0] == "gunicorn"]
    assert "--timeout" not in argv and option(argv, "-c", "--config") == GUNICORN_CONF
    assert runpy.run_path(str(ROOT / GUNICORN_CONF))["timeout"] >= 120
    assert load_schema()["properties"]["results"]["maxItems"] == 10_000
    visibility = int(environment(services()["worker"])["PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT"])
    assert visibility > settings.CELERY_TASK_TIME_LIMIT and visibility == settings.PTBENCH_DASHBOARD_VISIBILITY_TIMEOUT


def test_clients_reach_gunicorn_only_through_the_buffering_proxy():
    """Issue #46 item 8: compose published 3 sync gunicorn workers, which four slow clients held for
    25 s. Now only nginx is published, with deploy/nginx.conf (tests/dispatch/test_slow_clients.py runs
    it), which takes bodies up to the document limit and waits for gunicorn longer than its timeout."""
    from django.conf import settings

    found = services()
    assert "ports" not in found["web"], "gunicorn is published: slow clients reach its workers directly"
    proxy = found["proxy"]
    assert proxy["image"].startswith("nginx:") and proxy["ports"] == ["8000:8000"] and "web" in proxy["depends_on"]
    assert proxy["volumes"] == ["./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro"]
    server = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server web:8000;" in server and "listen 8000;" in server
    body_mib = int(re.search(r"client_max_body_size (\d+)m;", server).group(1))
    assert settings.INGEST_MAX_DOCUMENT_BYTES < body_mib * 2**20 and settings.ARTIFACT_MAX_BYTES < body_mib * 2**20
    read_s = int(re.search(r"proxy_read_timeout (\d+)s;", server).group(1))
    assert read_s > runpy.run_path(str(ROOT / GUNICORN_CONF))["timeout"]


def test_celery_subcommands_and_the_beat_scheduler_exist():
    from celery.bin.celery import celery as cli

    for name, argv, _ in celery_commands():
        subcommand = next(word for word in argv[1:] if not word.startswith("-") and word != option(argv, "-A", "--app"))
        assert subcommand in cli.commands, f"{name}: celery {subcommand} does not exist"
        if subcommand == "beat":
            module, _, attribute = option(argv, "-S", "--scheduler").partition(":")
            assert getattr(importlib.import_module(module), attribute)
            assert attribute == "DatabaseScheduler"  # schedules edited in the admin


def test_the_dashboard_worker_consumes_the_queues_the_dashboard_and_the_runners_send_to():
    from contract.messages import CASE_FINISHED, DASHBOARD_QUEUE

    workers = [(name, argv, svc) for name, argv, svc in celery_commands() if "worker" in argv and option(argv, "-A") == "dashboard"]
    assert [name for name, _, _ in workers] == ["worker"]
    _, argv, service = workers[0]
    app = app_of(argv, service)
    consumed = set(option(argv, "-Q", "--queues").split(","))
    assert consumed <= set(app["queues"]), f"queues not declared in dashboard/celery.py: {consumed - set(app['queues'])}"
    routed = {queue for queue in app["tasks"].values() if queue}
    assert DASHBOARD_QUEUE in consumed and routed <= consumed, f"tasks sent to queues no worker reads: {routed - consumed}"
    assert app["tasks"][CASE_FINISHED] == DASHBOARD_QUEUE
    assert "dispatch.requeue_stale_cases" in app["tasks"] and "dispatch.scheduled_run" in app["tasks"]


def test_gpu_workers_need_no_django_and_read_their_machine_class_queue():
    from runner.worker.config import MACHINE_CLASS
    from contract.messages import CASE_STARTED, DASHBOARD_QUEUE, RUN_CASE

    runners = [(name, argv, svc) for name, argv, svc in celery_commands() if option(argv, "-A", "--app") == RUNNER_APP]
    assert {name for name, _, _ in runners} >= {"gpu-worker"}
    from dashboard.celery import app as dashboard_app

    dashboard_queues = {queue.name for queue in dashboard_app.conf.task_queues}
    for name, argv, service in runners:
        env = environment(service)
        queue = option(argv, "-Q", "--queues")
        assert queue == env["PTBENCH_MACHINE_CLASS"] and MACHINE_CLASS.fullmatch(queue), f"{name}: -Q {queue}"
        assert queue not in dashboard_queues, f"{name}: a machine class named like a dashboard queue"
        # cases at once: the worker's own setting (runner.worker.slots), which --concurrency would override
        assert option(argv, "--concurrency", "-c") is None, f"{name}: --concurrency hides PTBENCH_CASES_AT_ONCE"
        assert {"PTBENCH_CASES_AT_ONCE", "PTBENCH_WARM_START"} <= set(env), f"{name}: {sorted(env)}"
        # A GPU machine need not have Django, the dashboard's code or a PostgreSQL driver, and the
        # worker's own interpreter need not have torch (the builds under test do).
        app = app_of(argv, service, absent=("django", "dashboard", "psycopg", "django_celery_beat", "torch"))
        assert app["dashboard"] == [], f"{name}: the runner worker imported {app['dashboard']}"
        assert RUN_CASE in app["tasks"] and app["queues"] == [queue]
        assert app["routes"][CASE_STARTED] == {"queue": DASHBOARD_QUEUE}


def test_gpu_workers_hold_no_database_credentials_and_reserve_nvidia_devices():
    config_source = (ROOT / "runner/worker/config.py").read_text()
    runners = {name: svc for name, argv, svc in celery_commands() if option(argv, "-A", "--app") == RUNNER_APP}
    devices, hostnames = [], []
    for name, service in runners.items():
        env = environment(service)
        assert "DATABASE_URL" not in env and not any(key.startswith(("DJANGO_", "POSTGRES")) for key in env), f"{name}: {sorted(env)}"
        assert not any("postgres" in value for value in env.values()), name
        for key in ("PTBENCH_BROKER_URL", "PTBENCH_MACHINE_CLASS", "PTBENCH_BUILDS", "CUDA_VISIBLE_DEVICES", "PTBENCH_VISIBILITY_TIMEOUT"):
            assert key in env, f"{name}: {key} is not set"
        for key in env:
            assert not key.startswith("PTBENCH_") or key in config_source, f"{name}: runner.worker.config does not read {key}"
        reserved = service["deploy"]["resources"]["reservations"]["devices"]
        nvidia = [d for d in reserved if d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", [])]
        assert nvidia and all(d.get("count") or d.get("device_ids") for d in nvidia), f"{name}: no NVIDIA reservation"
        devices += [i for d in nvidia for i in d.get("device_ids", [])]
        hostnames.append(option(commands(service)[0], "--hostname", "-n"))
    assert len(devices) == len(set(devices)), f"two workers on one GPU: {devices}"
    assert len(hostnames) == len(set(hostnames)), f"two workers with one name: {hostnames}"


def test_every_variable_the_file_uses_is_documented_in_the_deploying_page():
    readme = (ROOT / "docs" / "deploying.md").read_text()
    used = sorted({m.group(1) for text in strings(compose()) for m in VARIABLE.finditer(text) if m.group(1)})
    assert "PTBENCH_MACHINE_CLASS" in used and "PTBENCH_BROKER_URL" in used
    missing = [name for name in used if not re.search(rf"`{name}\b", readme)]
    assert not missing, f"used in docker-compose.yml, not in docs/deploying.md: {missing}"


@pytest.mark.parametrize("text, environ, expected", [
    ("${A:-x}", {}, "x"), ("${A:-x}", {"A": ""}, "x"), ("${A-x}", {"A": ""}, ""), ("${A}", {"A": "1"}, "1"),
    ("$${A:?m}", {}, "${A:?m}"), ("gpu0@%h", {}, "gpu0@%h"),
])
def test_interpolation_follows_compose(text, environ, expected):
    assert interpolate(text, environ) == expected


def test_only_the_runner_image_installs_torch():
    dockerfile = (ROOT / "Dockerfile").read_text()
    stages = dict(s.split("\n", 1) for s in dockerfile.split("\nFROM ")[1:])
    web = [body for head, body in stages.items() if head.endswith(" AS web") or head.endswith(" AS base")]
    assert web and not any("runner.txt" in body or "requirements.txt" in body for body in web)
    assert "torch==" not in (ROOT / "requirements" / "web.txt").read_text()
    assert "torch==" in (ROOT / "requirements" / "runner.txt").read_text()
    assert "pytest" not in (ROOT / "requirements" / "web.txt").read_text() + (ROOT / "requirements" / "runner.txt").read_text()


def test_the_page_cache_setting_reaches_the_dashboard_containers():
    # PTBENCH_PAGE_CACHE_SECONDS=0 in .env or the shell turns the page cache off in every dashboard
    # process (it never reached them: the cache stayed on).
    dashboard = {name: service for name, service in compose()["services"].items() if "DATABASE_URL" in environment(service)}
    assert {"web", "worker", "beat"} <= set(dashboard)
    for name, service in dashboard.items():
        for environ, seconds in (({}, "60"), ({"PTBENCH_PAGE_CACHE_SECONDS": "0"}, "0")):
            assert interpolate(environment(service), environ).get("PTBENCH_PAGE_CACHE_SECONDS") == seconds, name
