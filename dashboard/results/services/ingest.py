"""The one ingest service: a run document validated and stored, all or nothing (its machine, workloads,
configurations, series and results), and the run's build facts."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings
from django.db import transaction

from dashboard.results.compile_reference import compile_reference_of
from dashboard.results.imported import document_as_imported, imported_sources_label
from dashboard.results.page_cache import pages_version_bump
from dashboard.results.run_counts import run_counts_add
from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.results.summaries import build_summary_refresh
from dashboard.results.selectors.builds import build_imported_sources
from dashboard.results.variants import overrides_of_document
from contract.case_config import CaseConfig, CaseConfigError
from contract.planning import current_repro
from contract.document import METRIC_NAMES, DocumentError, InvalidDocument, check_document, check_size, load_document
from contract.reasons import DOCUMENT_DEFAULT
from dashboard.results.services.builds import _parse_time, build_date_from_first_run, build_get_or_create
from dashboard.results.services.validation import range_errors, storable_errors, workload_name_errors


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
    run_counts_add(run=run, new_results=new_results)
    if new_results or created:
        # The overview's summary rows of this build on this machine class (same transaction).
        build_summary_refresh(build_id=build.id, machine_class=machine.machine_class)
    return IngestOutcome(
        run_id=str(run.id),
        created=created,
        results_created=len(new_results),
        results_skipped=len(doc["results"]) - len(new_results),
    )


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
            "result_count": 0, "pass_count": 0, "graph_break_total": 0,  # run_counts_add adds its results
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
