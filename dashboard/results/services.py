"""Writes. ``run_ingest`` is the one way results enter the database: the runner, the Celery
ingest task, ``manage.py ingest`` and the REST API all call it."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.results.summaries import build_summary_refresh
from runner.document import METRIC_NAMES, DocumentError, InvalidDocument, check_document, check_size, parse_document

METRIC_FIELDS = METRIC_NAMES  # each is a column of Result


@dataclass(frozen=True)
class IngestOutcome:
    run_id: str
    created: bool  # the run was new
    results_created: int
    results_skipped: int  # already stored: posting a run again stores nothing twice

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "created": self.created,
            "results_created": self.results_created,
            "results_skipped": self.results_skipped,
        }


def run_ingest(*, document: dict | bytes | str) -> IngestOutcome:
    """Validate a run document and store it atomically; idempotent on ``run.id``.

    Raises :class:`runner.document.InvalidDocument` (nothing written) when the document is bad or
    contradicts what is stored (the same run id for another build, a sha stored with another torch
    version).
    """
    max_bytes = settings.INGEST_MAX_DOCUMENT_BYTES
    if isinstance(document, (bytes, str)):
        doc = parse_document(document, max_bytes=max_bytes)
    else:
        check_size(len(json.dumps(document).encode()), max_bytes=max_bytes)
        doc = check_document(document)
    with transaction.atomic():
        outcome = _store(doc)
        if outcome.results_created and settings.DETECT_AFTER_INGEST:
            transaction.on_commit(lambda: _detection_enqueue(run_id=outcome.run_id))
    return outcome


def _detection_enqueue(*, run_id: str) -> None:
    """Regression detection over the new results: a task on the ``analysis`` queue (in-process
    when Celery runs eagerly)."""
    from django.apps import apps  # noqa: PLC0415

    if apps.is_installed("dashboard.regressions"):
        from dashboard.regressions.tasks import detect_run  # noqa: PLC0415 (optional app)

        detect_run.delay(run_id)


def _store(doc: dict) -> IngestOutcome:
    build = _build_get_or_create(doc["build"])
    machine = _machine_upsert(doc["machine"])
    workloads = {w["name"]: _workload_upsert(w) for w in doc["workloads"]}
    run, created = _run_get_or_create(doc["run"], build=build, machine=machine)

    stored = {(wid, cid) for wid, cid in Result.objects.filter(run=run).values_list("workload_id", "config_id")}
    configs: dict[tuple, Config] = {}
    new_results = []
    for item in doc["results"]:
        key = tuple(item["config"][f] for f in ("compile_mode", "shape_regime", "dtype", "device"))
        if key not in configs:
            configs[key] = Config.objects.get_or_create(
                compile_mode=key[0], shape_regime=key[1], dtype=key[2], device=key[3]
            )[0]
        config, workload = configs[key], workloads[item["workload"]]
        if (workload.id, config.id) in stored:
            continue
        series = _series_get_or_create(workload=workload, config=config, machine_class=machine.machine_class)
        new_results.append(_result_from_document(item, run=run, workload=workload, config=config, series=series))
    Result.objects.bulk_create(new_results, batch_size=1000)
    if new_results or created:
        # The overview's summary rows of this build on this machine class (same transaction).
        build_summary_refresh(build_id=build.id, machine_class=machine.machine_class)
    return IngestOutcome(
        run_id=str(run.id),
        created=created,
        results_created=len(new_results),
        results_skipped=len(doc["results"]) - len(new_results),
    )


def _parse_time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _build_get_or_create(data: dict) -> Build:
    commit_time = _parse_time(data.get("commit_time"))
    build, created = Build.objects.get_or_create(
        git_sha=data["git_sha"],
        local_label=data.get("local_label", ""),
        defaults={
            "torch_version": data["torch_version"],
            "label": data.get("label", ""),
            "commit_time": commit_time,
            "ordered_at": commit_time or timezone.now(),
            "triton_version": data.get("triton_version") or "",
            "cuda_version": data.get("cuda_version") or "",
            "python_version": data.get("python_version") or "",
            "environment": data.get("environment", {}),
        },
    )
    if not created and build.torch_version != data["torch_version"]:
        raise InvalidDocument(
            [
                DocumentError(
                    "build.torch_version",
                    f"{data['torch_version']!r} contradicts the stored build {build.git_sha[:12]} "
                    f"(torch {build.torch_version}); give the build a distinct local_label",
                )
            ]
        )
    return build


def _machine_upsert(data: dict) -> Machine:
    facts = {
        "cpu_model": data.get("cpu_model") or "",
        "cpu_count": data.get("cpu_count"),
        "memory_bytes": data.get("memory_bytes"),
        "gpu_name": data.get("gpu_name") or "",
        "gpu_count": data.get("gpu_count") or 0,
        "driver_version": data.get("driver_version") or "",
        "cuda_version": data.get("cuda_version") or "",
    }
    machine, _ = Machine.objects.update_or_create(
        hostname=data["hostname"], machine_class=data["machine_class"], defaults=facts
    )
    return machine


def _workload_upsert(data: dict) -> Workload:
    workload, _ = Workload.objects.update_or_create(
        name=data["name"],
        defaults={
            "category": data.get("category", ""),
            "phase": data["phase"],
            "dynamic_dims": data.get("dynamic_dims", []),
            "description": data.get("description", ""),
        },
    )
    return workload


def _run_get_or_create(data: dict, *, build: Build, machine: Machine) -> tuple[Run, bool]:
    run, created = Run.objects.get_or_create(
        id=data["id"],
        defaults={
            "build": build,
            "machine": machine,
            "suite": data["suite"],
            "status": Run.Status.COMPLETED,
            "started_at": _parse_time(data.get("started_at")),
            "finished_at": _parse_time(data.get("finished_at")),
            "command": data.get("command", ""),
            "requested_by": data.get("requested_by", ""),
            "synthetic": data.get("synthetic", False),
            "notes": data.get("notes", ""),
        },
    )
    if not created:
        # Serialise concurrent ingests of one run, then make sure it is the same run.
        run = Run.objects.select_for_update().get(pk=run.pk)
        for field, stored, given in (
            ("build", run.build_id, build.id),
            ("machine", run.machine_id, machine.id),
            ("suite", run.suite, data["suite"]),
        ):
            if stored != given:
                raise InvalidDocument(
                    [DocumentError(f"run.{field}" if field == "suite" else field, f"run {run.id} is stored with another {field}")]
                )
    return run, created


def series_signature(*, workload_name: str, config: Config, machine_class: str) -> str:
    identity = [workload_name, config.compile_mode, config.shape_regime, config.dtype, config.device, machine_class]
    return hashlib.sha1(json.dumps(identity).encode()).hexdigest()


def _series_get_or_create(*, workload: Workload, config: Config, machine_class: str) -> Series:
    series, _ = Series.objects.get_or_create(
        workload=workload,
        config=config,
        machine_class=machine_class,
        defaults={"signature": series_signature(workload_name=workload.name, config=config, machine_class=machine_class)},
    )
    return series


def _result_from_document(item: dict, *, run: Run, workload: Workload, config: Config, series: Series) -> Result:
    metrics = item.get("metrics", {})
    values = {name: metrics.get(name) for name in METRIC_FIELDS}
    eager_peak, compiled_peak = values["eager_peak_memory_bytes"], values["compiled_peak_memory_bytes"]
    return Result(
        run=run,
        build_id=run.build_id,
        workload=workload,
        config=config,
        series=series,
        status=item["status"],
        memory_compression=eager_peak / compiled_peak if eager_peak and compiled_peak else None,
        samples=item.get("samples", {}),
        graph_breaks=item.get("graph_breaks", []),
        recompiles=item.get("recompiles", []),
        error=item.get("error"),
        repro=item.get("repro", ""),
        duration_s=item.get("duration_s"),
        environment=item.get("environment", {}),
        **values,
    )
