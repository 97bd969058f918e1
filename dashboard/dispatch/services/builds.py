"""Builds and where they live: registered by hand from an interpreter, or reported by workers."""
from __future__ import annotations

from django.db import transaction

from contract.variants import Overrides
from django.utils import timezone

from dashboard.dispatch.models import BuildEnvironment
from dashboard.results.models import Build
from dashboard.results.services import build_get_or_create
from dashboard.results.variants import variant_document
from contract.document import DocumentError, InvalidDocument, build_section


def _build_section(environment: dict, *, label: str = "", local_label: str | None = None,
                   overrides: Overrides | None = None) -> dict:
    """The run document's ``build`` of an interpreter's environment (``runner.report``'s), relabelled;
    with ``overrides``, its variant's (label derived from the base's)."""
    if local_label is not None:
        environment = {**environment, "build": {**environment["build"], "local_label": local_label}}
    return variant_document(build_section(environment, label=label or environment["build"].get("label")), overrides or Overrides())


def build_environment_record(*, environment: dict, python: str, machine_class: str, hostname: str, worker: str = "",
                             source: str, label: str = "", local_label: str | None = None,
                             overrides: Overrides | None = None) -> BuildEnvironment:
    """The build an interpreter holds (created if new) and the interpreter's row (updated)."""
    if not isinstance(environment, dict) or not isinstance(environment.get("build"), dict):
        raise InvalidDocument([DocumentError("environment.build", "missing: not a `python -m runner environment` answer")])
    with transaction.atomic():
        build = build_get_or_create(_build_section(environment, label=label, local_label=local_label, overrides=overrides))
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
    environment = probe_environment(resolved, overrides=overrides or None)
    problems = environment.pop("override_problems", [])
    if problems:  # keys or value types this build's torch does not have: nothing registered
        raise InvalidDocument([DocumentError(p["field"], p["message"]) for p in problems])
    before = set(Build.objects.values_list("id", flat=True).filter(git_sha=environment["build"]["git_sha"]))
    row = build_environment_record(environment=environment, python=resolved, machine_class=machine_class,
                                   hostname=hostname or socket.gethostname(), source=BuildEnvironment.Source.REGISTERED,
                                   label=label, local_label=local_label, overrides=overrides)
    return row.build, row.build_id not in before


def worker_report(*, hostname: str, worker: str, machine_class: str, builds: list[dict], errors: list[dict] | None = None) -> int:
    """A worker's list of the interpreters it has: each build registered, each row refreshed. An
    interpreter the worker no longer reports is dropped. Returns how many it reported."""
    with transaction.atomic():
        kept = []
        for item in builds:
            row = build_environment_record(environment=item["environment"], python=item["python"],
                                           machine_class=machine_class, hostname=hostname, worker=worker,
                                           source=BuildEnvironment.Source.WORKER)
            kept.append(row.id)
        (BuildEnvironment.objects.filter(machine_class=machine_class, hostname=hostname, worker=worker,
                                         source=BuildEnvironment.Source.WORKER).exclude(id__in=kept).delete())
    return len(kept)
