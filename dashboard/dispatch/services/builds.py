"""Builds and where they live: registered by hand from an interpreter, or reported by workers."""
from __future__ import annotations

from django.db import transaction

import logging

from django.conf import settings
from django.utils import timezone

from contract.messages import PROBE_BUILDS
from contract.variants import Overrides

from dashboard.dispatch.models import BuildEnvironment
from dashboard.results.models import Build
from dashboard.results.services import build_get_or_create
from dashboard.results.variants import variant_document
from contract.document import DocumentError, InvalidDocument, build_section

log = logging.getLogger("ptbench.dispatch")


def _build_section(environment: dict, *, label: str = "", local_label: str | None = None,
                   overrides: Overrides | None = None) -> dict:
    """The run document's ``build`` of an interpreter's environment (``runner.report``'s), relabelled;
    with ``overrides``, its variant's (label derived from the base's)."""
    if local_label is not None:
        environment = {**environment, "build": {**environment["build"], "local_label": local_label}}
    return variant_document(build_section(environment, label=label or environment["build"].get("label")), overrides or Overrides())


def build_environment_record(*, environment: dict, python: str, machine_class: str, hostname: str, worker: str = "",
                             source: str, label: str = "", local_label: str | None = None,
                             overrides: Overrides | None = None, catalog: dict | None = None) -> BuildEnvironment:
    """The build an interpreter holds (created if new) and the interpreter's row (updated); with
    ``catalog`` (its torch's config keys), recorded on the build."""
    if not isinstance(environment, dict) or not isinstance(environment.get("build"), dict):
        raise InvalidDocument([DocumentError("environment.build", "missing: not a `python -m runner environment` answer")])
    with transaction.atomic():
        build = build_get_or_create(_build_section(environment, label=label, local_label=local_label, overrides=overrides))
        if isinstance(catalog, dict) and catalog.get("sections") and build.config_catalog != catalog:
            build.config_catalog = catalog
            build.save(update_fields=["config_catalog"])
        # One interpreter may hold a base build and variants of it: one row each.
        row, _ = BuildEnvironment.objects.update_or_create(
            machine_class=machine_class, hostname=hostname[:255], python=python[:1000], build__overrides=build.overrides,
            defaults={"build": build, "worker": worker[:255], "source": source, "environment": environment,
                      "reported_at": timezone.now()},
        )
    return row


def build_register_local(*, python: str, machine_class: str = "", label: str = "", local_label: str | None = None,
                         hostname: str = "", overrides: Overrides | None = None) -> tuple[Build, bool]:
    """Probe an interpreter on this host (``python -m runner environment``) and register its build
    (with ``overrides``, its variant: ``contract.variants``).
    Returns (build, created). Raises ``EnvironmentProbeFailed`` when it cannot describe itself."""
    import shutil
    import socket

    from runner.engine.executor import EnvironmentProbeFailed, probe_environment

    resolved = shutil.which(python)
    if resolved is None:
        raise EnvironmentProbeFailed(f"{python}: not an executable file")
    environment = probe_environment(resolved, overrides=overrides or None, catalog=True)
    catalog = environment.pop("config_catalog", None)
    problems = environment.pop("override_problems", [])
    if problems:  # keys or value types this build's torch does not have: nothing registered
        raise InvalidDocument([DocumentError(p["field"], p["message"]) for p in problems])
    before = set(Build.objects.values_list("id", flat=True).filter(git_sha=environment["build"]["git_sha"]))
    row = build_environment_record(environment=environment, python=resolved, machine_class=machine_class,
                                   hostname=hostname or socket.gethostname(), source=BuildEnvironment.Source.REGISTERED,
                                   label=label, local_label=local_label, overrides=overrides, catalog=catalog)
    return row.build, row.build_id not in before


def worker_report(*, hostname: str, worker: str, machine_class: str, builds: list[dict], errors: list[dict] | None = None) -> int:
    """A worker's list of the interpreters it has: each build registered, each row refreshed. An
    interpreter the worker no longer reports is dropped. Returns how many it reported."""
    with transaction.atomic():
        kept = []
        for item in builds:
            row = build_environment_record(environment=item["environment"], python=item["python"],
                                           machine_class=machine_class, hostname=hostname, worker=worker,
                                           source=BuildEnvironment.Source.WORKER, catalog=item.get("config_catalog"))
            kept.append(row.id)
        (BuildEnvironment.objects.filter(machine_class=machine_class, hostname=hostname, worker=worker,
                                         source=BuildEnvironment.Source.WORKER).exclude(id__in=kept).delete())
    for error in errors or []:  # an interpreter it could not probe (e.g. one the admin asked for)
        log.warning("worker %s of %s could not probe %s: %s", worker, machine_class, error.get("python"), error.get("error"))
    return len(kept)


def build_probe_classes(*, build: Build) -> list[str]:
    """The machine classes whose workers reported (or someone registered) ``build`` or its base."""
    from dashboard.results.variants import base_of

    builds = [build] + ([b] if (b := base_of(build)) is not None else [])
    return sorted(set(BuildEnvironment.objects.filter(build__in=builds).exclude(machine_class="")
                      .values_list("machine_class", flat=True)))


def build_probe_request(*, machine_class: str, python: str = "") -> None:
    """Ask a worker of ``machine_class`` to probe its builds (and ``python``, one more interpreter
    of its machine) and report them with their config catalogs: a message on the class's queue,
    sent once the caller's transaction commits; the web process never runs an interpreter. Without
    a broker (the quick start, where cases run in the dashboard's process too) the probe runs here
    after the commit, as an in-process worker would."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        from dashboard.dispatch.inprocess import probe_inprocess

        transaction.on_commit(lambda: probe_inprocess(machine_class=machine_class, python=python))
        return
    from kombu import Queue

    from dashboard.celery import app
    from dashboard.durable import send_after_commit

    send_after_commit(lambda: app.send_task(PROBE_BUILDS, kwargs={"python": python} if python else {}, queue=Queue(machine_class)),
                      what=f"a probe of the builds of {machine_class}")


class BaseNotProbed(LookupError):
    """A variant's config keys cannot be checked yet: its base build's torch was never probed (or
    the base is not stored). ``field`` names the override field; ``message`` says what was done."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field, self.message = field_name, message


def variant_overrides_validate(*, base: Build | None, overrides: Overrides, machine_class: str = "",
                               base_name: str = "", field_prefix: str = "") -> None:
    """Before a variant of ``base`` is stored (the API, the admin): its config keys checked against
    the config catalog of ``base``'s torch. Raises ``InvalidDocument`` naming each bad key, or
    ``BaseNotProbed`` when that catalog is unknown, after asking a worker of ``machine_class`` (else
    of each class that reported ``base``) to probe it: the same request succeeds once it has."""
    from dashboard.results.variants import CatalogUnknown, variant_overrides_check

    field_name = f"{field_prefix}config"
    if not overrides.config:
        return
    if base is None:
        raise BaseNotProbed(field_name, f"the base build {base_name} is not stored, so these config keys cannot be "
                            "checked against its torch: let a worker report it (PTBENCH_BUILDS) or run "
                            "`manage.py register_build --python ...` first")
    try:
        variant_overrides_check(base=base, overrides=overrides, field_prefix=field_prefix)
    except CatalogUnknown as exc:
        from contract.queues import machine_class_problem

        classes = [machine_class] if machine_class else build_probe_classes(build=base)
        classes = [name for name in classes if not machine_class_problem(name)]
        for name in classes:
            build_probe_request(machine_class=name)
        then = (f"; asked a worker of {', '.join(classes)} to probe it: send this again once it has reported "
                "(the build's `probed` is then true)") if classes else (
                "; no worker has reported it: start a worker with it in PTBENCH_BUILDS, or run "
                "`manage.py register_build --python ...`")
        raise BaseNotProbed(field_name, exc.message + then) from None
