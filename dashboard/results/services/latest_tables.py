"""The home page's tables of a machine class's latest build, stored (``LatestTables``): its
per-suite table, training rows and last night's failures by status, over every configuration. They
are computed from the build's ~2,000 cases per class, whose read and decoding took ~20 ms of a cold
``/`` per class at 1,000,000 results (issue #46 item 13). ``latest_tables`` serves them from the
class's stored row while its inputs (the build and its ``BuildSummary`` counts) are unchanged, else
computes them (``build_cases`` read once for the three) and stores them; the pipeline stores them
after each ingest (``latest_tables_refresh``), so the first ``/`` after one reads a row. Stored as
JSON text: floats round-trip to the bit (``NaN``/``Infinity`` included), orders are kept."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from dashboard.results.models import BuildSummary, LatestTables, Run
from dashboard.results.selectors.build_cases import CASE_COLUMNS, build_cases
from dashboard.results.selectors.builds import build_not_passed, build_summary_latest
from dashboard.results.selectors.suites import SuiteRow, suite_table
from dashboard.results.selectors.training import TrainingRow, training_table

log = logging.getLogger(__name__)
TABLES_VERSION = 1  # bump when the tables are computed differently: stored ones of an older way are computed again


@dataclass
class Tables:
    suites: list[SuiteRow]
    training: list[TrainingRow]
    not_passed: dict[str, int]  # status -> cases, most first (build_not_passed)


def latest_tables(*, summary: BuildSummary) -> Tables:
    """The tables of ``summary``'s build on its class over every configuration: stored when the
    inputs are unchanged, else computed and stored."""
    inputs = _inputs(summary)
    stored = (LatestTables.objects.filter(machine_class=summary.machine_class, build_id=summary.build_id, inputs=inputs)
              .values_list("tables", flat=True).first())
    if stored is not None:
        return _decode(stored)
    return _compute_and_store(summary, inputs)


def latest_tables_refresh(*, run_id) -> bool:
    """After a run is stored: its machine class's latest build's tables, computed and stored unless
    stored with unchanged inputs. True when they were computed."""
    machine_class = Run.objects.filter(pk=run_id).values_list("machine__machine_class", flat=True).first()
    return machine_class is not None and latest_tables_store(machine_class=machine_class)


def latest_tables_store(*, machine_class: str) -> bool:
    """The class's latest build's tables, computed and stored unless stored with unchanged inputs
    (``bench/dashboard_load.py`` calls it as the pipeline would). True when they were computed."""
    summary = build_summary_latest(machine_class=machine_class)
    if summary is None:
        return False
    inputs = _inputs(summary)
    if LatestTables.objects.filter(machine_class=machine_class, build_id=summary.build_id, inputs=inputs).exists():
        return False
    _compute_and_store(summary, inputs)
    return True


def tables_of_cases(*, summary: BuildSummary, cases: dict[int, dict], config_ids: list[int] | None = None) -> Tables:
    """The tables of the build's ``cases`` (``build_cases``), of some configurations (all where
    ``config_ids`` is None; the failures by status: of every configuration, as last night counts them): what is
    stored, and what a filtered page computes."""
    build_id, machine_class = summary.build_id, summary.machine_class
    return Tables(suites=suite_table(build_id=build_id, machine_class=machine_class, config_ids=config_ids, cases=cases),
                  training=training_table(build_id=build_id, machine_class=machine_class, config_ids=config_ids, cases=cases),
                  not_passed=build_not_passed(build_id=build_id, machine_class=machine_class, cases=cases))


def _inputs(summary: BuildSummary) -> str:
    """What the tables are computed from: the build, its counts on the class (a re-run, a partial
    run completed), the cases' columns, the tables' version."""
    key = repr((TABLES_VERSION, CASE_COLUMNS, summary.build_id, summary.runs, summary.latest_run_id, summary.cases,
                summary.passed))
    return hashlib.sha1(key.encode()).hexdigest()


def _compute_and_store(summary: BuildSummary, inputs: str) -> Tables:
    tables = tables_of_cases(summary=summary, cases=build_cases(build_id=summary.build_id, machine_class=summary.machine_class))
    fields = {"build_id": summary.build_id, "inputs": inputs, "tables": _encode(tables)}
    try:
        with transaction.atomic():
            LatestTables.objects.update_or_create(machine_class=summary.machine_class, defaults=fields)
    except IntegrityError:  # another request stored them meanwhile: they are these
        log.info("latest tables of %s stored concurrently", summary.machine_class)
    return tables


def _encode(tables: Tables) -> str:
    return json.dumps(dataclasses.asdict(tables))


def _decode(stored: str) -> Tables:
    raw = json.loads(stored)
    return Tables(suites=[SuiteRow(**row) for row in raw["suites"]], training=[TrainingRow(**row) for row in raw["training"]],
                  not_passed=raw["not_passed"])
