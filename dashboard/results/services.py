"""Writes. ``run_ingest`` is the one way results enter the database; it stores and answers what it
stored, nothing more: ``dashboard.pipeline`` (the Celery ingest task, ``manage.py ingest``, the REST
API, dispatch) calls it and starts what follows."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from dashboard.results.build_dates import build_time, version_date
from dashboard.results.compile_reference import compile_reference_of
from dashboard.results.imported import document_as_imported, imported_sources_label
from dashboard.results.page_cache import pages_version_bump
from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.results.summaries import build_summary_refresh
from dashboard.results.selectors.builds import build_imported_sources
from dashboard.results.selectors.build_refs import label_problem
from dashboard.results.variants import overrides_of_document, overrides_stored, variant_document
from contract.case_config import CaseConfig, CaseConfigError
from contract.planning import current_repro
from contract.document import LOCAL_LABEL_PATTERN, METRIC_NAMES, DocumentError, InvalidDocument, check_document, check_size, load_document
from contract.reasons import DOCUMENT_DEFAULT
from contract.variants import Overrides
from contract.values import printable, value_problems

METRIC_FIELDS = METRIC_NAMES  # each is a column of Result


@dataclass(frozen=True)
class IngestOutcome:
    run_id: str
    created: bool  # the run was new
    results_created: int
    results_skipped: int  # already stored: posting a run again stores nothing twice
    variant: bool = False  # the build has overrides: an experiment, not a point of its base's trends

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "created": self.created,
            "results_created": self.results_created,
            "results_skipped": self.results_skipped,
        }


def run_ingest(*, document: dict | bytes | str, size_bytes: int | None = None,
               prepare: Callable[[dict], None] | None = None, imported: bool = False) -> IngestOutcome:
    """Validate a run document and store it atomically; idempotent on ``run.id``.

    ``size_bytes``: the serialized size of a parsed ``document`` where the caller knows it (the
    API: the request body's length), instead of serializing it again to compare with the limit.
    ``prepare``: called with the checked document inside the transaction, before anything of it is
    stored (the API moves a requested run to the host the document names); it may raise
    ``InvalidDocument`` too.
    ``imported``: sample data measured elsewhere (``dashboard.results.imported``): its own build,
    labelled with host and day, and its run marked ``imported``.
    Raises :class:`contract.document.InvalidDocument` (nothing written) when the document is bad, holds
    what the database cannot store (see ``storable_errors``, ``range_errors``) or contradicts what
    is stored (the same run id for another build, a sha stored with another torch version).
    """
    max_bytes = settings.INGEST_MAX_DOCUMENT_BYTES
    if isinstance(document, (bytes, str)):
        doc = load_document(document, max_bytes=max_bytes)
    else:
        check_size(len(json.dumps(document).encode()) if size_bytes is None else size_bytes, max_bytes=max_bytes)
        doc = document
    # What the schema allows but PostgreSQL (or JSON on the way back) cannot hold, checked first:
    # a document that has such values is refused naming them, whatever else is wrong with it.
    if errors := storable_errors(doc, []) + range_errors(doc) + workload_name_errors(doc):
        raise InvalidDocument(errors)
    doc = check_document(doc)
    with transaction.atomic():
        if prepare is not None:
            prepare(doc)
        if imported:
            document_as_imported(doc)
        outcome = _store(doc, imported=imported)
        if outcome.results_created or outcome.created:
            transaction.on_commit(pages_version_bump)
    return replace(outcome, variant=bool(overrides_of_document(doc["build"])))


# --- what the database cannot store ----------------------------------------------------------------
def storable_errors(value, path: list) -> list[DocumentError]:
    """What PostgreSQL cannot store, or JSON cannot carry back, anywhere in a parsed JSON value
    (``contract.values``: NUL and unpaired surrogates, NaN and infinite numbers, nesting past its
    limit), named by path (``path``: where ``value`` is in the document)."""
    return [DocumentError(field, message) for field, message in value_problems(value, path)]


def _integer_limits(model, names) -> dict[str, tuple[int, int]]:
    """The range of each integer column among ``names`` on this database (int4 or int8)."""
    limits = {}
    for name in names:
        field = model._meta.get_field(name)
        if isinstance(field, models.IntegerField):
            low, high = connection.ops.integer_field_range(field.get_internal_type())
            limits[name] = (-(2**63) if low is None else low, 2**63 - 1 if high is None else high)
    return limits


# A workload's name is part of its page's URL (/workloads/<name>/): slashes are fine (hf/bert-base),
# a segment that climbs out of it is not (../../admin/x linked to /admin/x/), nor a backslash
# (browsers read it as a slash) or a control character.
_BAD_WORKLOAD_NAME = re.compile(r"^/|//|/$|(^|/)\.\.?(/|$)|[\\\x01-\x1f\x7f]")  # NUL: storable_errors


def workload_name_errors(document) -> list[DocumentError]:
    """Workload names (declared and in results) that would not stay inside their page's URL."""
    errors = []

    def check(name, where: str) -> None:
        if isinstance(name, str) and name and _BAD_WORKLOAD_NAME.search(name):
            errors.append(DocumentError(where, f"{name[:80]!r} may not have an empty, '.' or '..' segment, "
                                               "a backslash or a control character (it is part of the workload's URL)"))

    for key, field in (("workloads", "name"), ("results", "workload")):
        items = document.get(key) if isinstance(document, dict) else None
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                check(item.get(field), f"{key}[{index}].{field}")
    return errors


def range_errors(document) -> list[DocumentError]:
    """Integers the document's schema allows but their columns cannot hold (a cpu_count of 2**32)."""
    errors = []

    def check(value, where: str, limit: tuple[int, int]) -> None:
        # JSON Schema counts 3e9 as an integer: a float that is one is checked as one (it reached
        # PostgreSQL as a 500 before, issue #46 item 9).
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if whole and not isinstance(value, bool) and not limit[0] <= value <= limit[1]:
            errors.append(DocumentError(where, f"{value:g} is outside {limit[0]}..{limit[1]}" if isinstance(value, float)
                                        else f"{value} is outside {limit[0]}..{limit[1]}"))

    machine = document.get("machine") if isinstance(document, dict) else None
    if isinstance(machine, dict):
        for name, limit in _integer_limits(Machine, ("cpu_count", "gpu_count", "memory_bytes")).items():
            check(machine.get(name), f"machine.{name}", limit)
    results = document.get("results") if isinstance(document, dict) else None
    if isinstance(results, list):
        limits = _integer_limits(Result, METRIC_NAMES)
        for index, item in enumerate(results):
            metrics = item.get("metrics") if isinstance(item, dict) else None
            if isinstance(metrics, dict):
                for name, limit in limits.items():
                    check(metrics.get(name), f"results[{index}].metrics.{name}", limit)
    return errors


# --- storing ---------------------------------------------------------------------------------------
def _imported_label_update(build: Build) -> None:
    """An imported build's label names every host and day it was imported from."""
    label = imported_sources_label(torch_version=build.torch_version, sources=build_imported_sources(build=build))
    if label != build.label:
        build.label = label
        build.save(update_fields=["label"])


def _store(doc: dict, *, imported: bool = False) -> IngestOutcome:
    build = build_get_or_create(doc["build"])
    machine = _machine_upsert(doc["machine"])
    workloads = _workloads_upsert(doc["workloads"])
    run, created = _run_get_or_create(doc["run"], build=build, machine=machine, imported=imported)
    facts = run_build_facts(doc["build"])
    if run.build_facts != facts:
        run.build_facts = facts
        Run.objects.filter(pk=run.pk).update(build_facts=facts)
    if created:
        build_date_from_first_run(build=build, run=run)
        if imported:
            _imported_label_update(build)

    stored = {(wid, cid) for wid, cid in Result.objects.filter(run=run).values_list("workload_id", "config_id")}
    case_configs = _case_configs(doc["results"])
    configs = _configs_get_or_create(case_configs)
    cases = []  # (item, workload, config) of each result not stored yet
    for item, case_config in zip(doc["results"], case_configs):
        config, workload = configs[case_config.key], workloads[item["workload"]]
        if (workload.id, config.id) not in stored:
            cases.append((item, workload, config))
    series = _series_get_or_create_many(cases=[(w, c) for _, w, c in cases], machine_class=machine.machine_class)
    new_results = [
        _result_from_document(item, run=run, workload=workload, config=config, series=series[workload.id, config.id])
        for item, workload, config in cases
    ]
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


def build_get_or_create(data: dict) -> Build:
    """The document's build, created if new. A variant (``build.overrides``) is its own build: two
    different sets of overrides under one (git_sha, local_label) are refused."""
    if not re.fullmatch(LOCAL_LABEL_PATTERN, data.get("local_label", "")):  # a probe's or a command line's label too
        raise InvalidDocument([DocumentError("build.local_label", f"{printable(data['local_label'])[:100]!r}: letters, digits "
                                             "and . _ + - only (it is part of the build's ref and URLs)")])
    if problem := label_problem(data.get("label", "")):
        raise InvalidDocument([DocumentError("build.label", problem)])
    overrides = overrides_of_document(data)
    commit_time = _parse_time(data.get("commit_time"))
    build, created = Build.objects.get_or_create(
        git_sha=data["git_sha"],
        local_label=data.get("local_label", ""),
        defaults={
            "torch_version": data["torch_version"],
            "label": data.get("label", ""),
            "commit_time": commit_time,
            # A build registered before any run of it, with no date of its own, waits at the time
            # it was registered until its first run gives one (build_date_from_first_run).
            "ordered_at": build_time(torch_version=data["torch_version"], commit_time=commit_time, first_run_started=None)
            or timezone.now(),
            "triton_version": data.get("triton_version") or "",
            "cuda_version": data.get("cuda_version") or "",
            "python_version": data.get("python_version") or "",
            "environment": data.get("environment", {}),
            "overrides": overrides.as_document() if overrides else {},
        },
    )
    if not created and overrides_stored(build) != overrides:
        raise InvalidDocument([DocumentError(
            "build.overrides",
            f"build {build.git_sha[:12]}+{build.local_label} is stored with other overrides "
            f"({overrides_stored(build).summary() or 'none'}); a variant needs its own local_label",
        )])
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


def variant_get_or_create(*, base, overrides: Overrides):
    """The variant of ``base`` with ``overrides`` (``base`` itself when there are none)."""
    if not overrides:
        return base
    data = {"torch_version": base.torch_version, "git_sha": base.git_sha, "local_label": base.local_label,
            "label": base.label, "commit_time": base.commit_time.isoformat() if base.commit_time else None,
            "triton_version": base.triton_version, "cuda_version": base.cuda_version,
            "python_version": base.python_version, "environment": base.environment}
    return build_get_or_create(variant_document(data, overrides))


def build_date_from_first_run(*, build: Build, run: Run) -> None:
    """Date a build that has no date of its own (no commit time, no nightly or known release
    version) by the start of its first run; called when a run is created."""
    if build.commit_time is not None or version_date(build.torch_version) is not None or run.started_at is None:
        return
    if Run.objects.filter(build=build).exclude(pk=run.pk).exists():
        return
    Build.objects.filter(pk=build.pk).update(ordered_at=run.started_at)
    build.ordered_at = run.started_at


def _whole(value):
    """An integer written as a float (``3e9``, which JSON Schema calls an integer) as an int."""
    return int(value) if isinstance(value, float) else value


def _machine_upsert(data: dict) -> Machine:
    facts = {
        "cpu_model": data.get("cpu_model") or "",
        "cpu_count": _whole(data.get("cpu_count")),
        "memory_bytes": _whole(data.get("memory_bytes")),
        "gpu_name": data.get("gpu_name") or "",
        "gpu_count": _whole(data.get("gpu_count")) or 0,
        "driver_version": data.get("driver_version") or "",
        "cuda_version": data.get("cuda_version") or "",
    }
    # Written only when a fact changed: update_or_create would lock the row until commit, and so
    # make every concurrent ingest from one host wait for the one before it.
    machine, created = Machine.objects.get_or_create(hostname=data["hostname"], machine_class=data["machine_class"], defaults=facts)
    changed = {} if created else {name: value for name, value in facts.items() if getattr(machine, name) != value}
    if changed:
        Machine.objects.filter(pk=machine.pk).update(**changed)
        for name, value in changed.items():
            setattr(machine, name, value)
    return machine


def _workloads_upsert(items: list[dict]) -> dict[str, Workload]:
    """The document's workloads by name, created or brought up to date: a read, an insert of the
    new ones (a concurrent ingest may insert them first) and an update of the changed ones."""
    wanted = {
        item["name"]: {
            "category": item.get("category", ""),
            "phase": item["phase"],
            "dynamic_dims": item.get("dynamic_dims", []),
            "description": item.get("description", ""),
        }
        for item in items
    }
    found = {w.name: w for w in Workload.objects.filter(name__in=wanted)}
    # New rows in one order (by name, series by ids below): two ingests inserting the same new rows
    # wait for each other instead of deadlocking.
    if missing := [Workload(name=name, **facts) for name, facts in sorted(wanted.items()) if name not in found]:
        Workload.objects.bulk_create(missing, ignore_conflicts=True)
        found.update((w.name, w) for w in Workload.objects.filter(name__in=[w.name for w in missing]))
    changed = []
    for name, workload in sorted(found.items()):
        if any(getattr(workload, field) != value for field, value in wanted[name].items()):
            for field, value in wanted[name].items():
                setattr(workload, field, value)
            changed.append(workload)
    if changed:
        Workload.objects.bulk_update(changed, ["category", "phase", "dynamic_dims", "description"])
    return found


def run_build_facts(build: dict) -> dict:
    """What a run document says of its build beyond the build's identity (``Run.build_facts``)."""
    return {key: build[key] for key in ("triton_version", "cuda_version", "python_version", "environment") if build.get(key)}


def _run_get_or_create(data: dict, *, build: Build, machine: Machine, imported: bool = False) -> tuple[Run, bool]:
    run, created = Run.objects.get_or_create(
        id=data["id"],
        defaults={
            "build": build,
            "machine": machine,
            "size": data["suite"],  # the document's name for the size (schema version 1)
            "status": Run.Status.COMPLETED,
            "started_at": _parse_time(data.get("started_at")),
            "finished_at": _parse_time(data.get("finished_at")),
            "command": data.get("command", ""),
            "requested_by": data.get("requested_by", ""),
            "reason": data.get("reason", DOCUMENT_DEFAULT),
            "synthetic": data.get("synthetic", False),
            "imported": imported,
            "notes": data.get("notes", ""),
        },
    )
    if not created:
        # Serialise concurrent ingests of one run, then make sure it is the same run.
        run = Run.objects.select_for_update().get(pk=run.pk)
        for field, stored, given in (
            ("build", run.build_id, build.id),
            ("machine", run.machine_id, machine.id),
            ("size", run.size, data["suite"]),
            ("reason", run.reason, data.get("reason", run.reason)),  # a document without one takes the run's
        ):
            if stored != given:
                raise InvalidDocument(
                    [DocumentError({"size": "run.suite", "reason": "run.reason"}.get(field, field),
                                   f"run {run.id} is stored with another {field}")]
                )
    return run, created


def _case_configs(results: list[dict]) -> list[CaseConfig]:
    """Each result's configuration; one the vocabulary does not know is refused naming its field."""
    configs = []
    for index, item in enumerate(results):
        try:
            configs.append(CaseConfig.from_document(item["config"]))
        except CaseConfigError as exc:
            raise InvalidDocument([DocumentError(f"results[{index}].config.{exc.field}", exc.message)]) from None
    return configs


def _configs_get_or_create(cases: list[CaseConfig]) -> dict[str, Config]:
    """The stored configuration of each of ``cases`` by its key, the new ones inserted in the
    order the document names them, as ingest always created them (ON CONFLICT DO NOTHING: a
    concurrent ingest may insert them first)."""
    wanted = {case.key: case for case in cases}
    found = {c.key: c for c in Config.objects.filter(key__in=wanted)}
    if missing := [Config(key=key, tags=case.as_document()) for key, case in wanted.items() if key not in found]:
        Config.objects.bulk_create(missing, ignore_conflicts=True)
        found.update((c.key, c) for c in Config.objects.filter(key__in=[c.key for c in missing]))
    return found


def config_get_or_create(*, case: CaseConfig) -> Config:
    """The stored configuration of ``case``, created if new."""
    return _configs_get_or_create([case])[case.key]


def series_signature(*, workload_name: str, config: Config, machine_class: str) -> str:
    """A stable hash of the series' identity: the same for a series as before configurations had
    keys (``CaseConfig.signature_part``), so links and external tools keep naming it."""
    identity = [workload_name, *config.case_config.signature_part(), machine_class]
    return hashlib.sha1(json.dumps(identity).encode()).hexdigest()


def _series_get_or_create_many(*, cases: list[tuple[Workload, Config]], machine_class: str) -> dict[tuple[int, int], Series]:
    """The series of each (workload, config) on the class by (workload id, config id): one read,
    then one insert of the missing ones (ON CONFLICT DO NOTHING: a concurrent ingest may insert
    them first) and a read of those, instead of a get_or_create per result."""
    if not cases:
        return {}

    def read(pairs) -> dict[tuple[int, int], Series]:
        rows = Series.objects.filter(
            machine_class=machine_class, workload_id__in={w.id for w, _ in pairs}, config_id__in={c.id for _, c in pairs}
        )
        return {(s.workload_id, s.config_id): s for s in rows}

    found = read(cases)
    if missing := sorted(((w, c) for w, c in cases if (w.id, c.id) not in found), key=lambda pair: (pair[0].id, pair[1].id)):
        Series.objects.bulk_create(
            [
                Series(workload=w, config=c, machine_class=machine_class,
                       signature=series_signature(workload_name=w.name, config=c, machine_class=machine_class))
                for w, c in missing
            ],
            ignore_conflicts=True,
        )
        found.update(read(missing))
    return found


def cpu_weights_only(item: dict, values: dict) -> int | None:
    """A CPU case whose eager and compiled peaks are the same bytes: on a CPU a side's peak is its
    weights plus the rise of the process's peak resident size (runner.engine.memory), and at the
    tiny size that rise is 0 on both sides (mlp_loop: 16,896 and 16,896 bytes, its weights, in every
    CPU run of bench/results), so the case measured its weights, not its memory: a compression of
    1.000x whatever the compiler did, where documents of an older runner have none. Its byte count
    (kept in ``environment.memory_weights_bytes``), else None (docs/measuring.md)."""
    eager, compiled = values.get("eager_peak_memory_bytes"), values.get("compiled_peak_memory_bytes")
    device = (item.get("config") or {}).get("device")
    return eager if device == "cpu" and eager is not None and eager == compiled else None


def _result_from_document(item: dict, *, run: Run, workload: Workload, config: Config, series: Series) -> Result:
    metrics = item.get("metrics", {})
    values = {name: metrics.get(name) for name in METRIC_FIELDS}
    environment = item.get("environment", {})
    if weights := cpu_weights_only(item, values):  # no memory measured: "–" on every CPU class alike
        values.update(eager_peak_memory_bytes=None, compiled_peak_memory_bytes=None)
        environment = {**environment, "memory_weights_bytes": weights}
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
        path_phases=item.get("path_phases", {}),
        repro=current_repro(item.get("repro", "")),
        duration_s=item.get("duration_s"),
        environment=environment,
        compile_phases=item.get("compile_phases", {}),
        kernel_profile=item.get("kernel_profile", {}),
        cost=item.get("cost", {}),
        compile_reference=compile_reference_of(item.get("environment")),
        # The file is found by sha256 (dashboard.results.artifacts); a path beside a document means nothing here.
        artifact={k: v for k, v in item["artifact"].items() if k != "path"} if item.get("artifact") else None,
        **values,
    )
