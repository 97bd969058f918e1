"""Home's judged cells, stored (regressions.services.home_cells): the pipeline stores each class's
cells once its noise bands are stored, and a cold ``/`` reads that row instead of the two builds'
cases and their bands. On the quick-start-like database (tests/dashboard/quickstart_data.py, its
ingests through the pipeline) the stored cells are the judged ones, cell by cell and tone by tone;
cells whose inputs changed (a second run of the head) are judged again, never served."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.regressions.models import HomeCellSet
from dashboard.regressions.services.home_cells import home_cells
from dashboard.regressions.services.noise_bands import noise_bands_for_compare
from dashboard.results.selectors.builds import build_summary_latest, build_summary_previous, machine_class_list
from dashboard.results.selectors.overview import class_cells, overview_list
from tests.dashboard.page_history import cases, ingest_build
from tests.dashboard.quickstart_data import quickstart_database

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def judged_now(machine_class: str) -> dict:
    latest = build_summary_latest(machine_class=machine_class)
    previous = build_summary_previous(summary=latest)
    bands = noise_bands_for_compare(machine_class=machine_class, base=previous.build, head=latest.build)
    return class_cells(machine_class=machine_class, base_id=previous.build_id, head_id=latest.build_id, bands=bands)


def test_the_stored_cells_are_the_judged_ones_on_the_quick_start_database(client, tmp_path):
    quickstart_database(tmp_path, detect=True)  # eager Celery: each ingest's pipeline stores the bands, then the cells
    compared = [mc for mc in machine_class_list() if build_summary_previous(summary=build_summary_latest(machine_class=mc))]
    assert compared and set(HomeCellSet.objects.values_list("machine_class", flat=True)) == set(compared)
    tones = set()
    for machine_class in compared:
        now = judged_now(machine_class)
        with CaptureQueriesContext(connection) as queries:
            stored = [block for block in overview_list(cells=home_cells) if block.machine_class == machine_class][0]
        assert not [q for q in queries if '"results_result"' in q["sql"]], "a stored class read its cases"
        assert {row.config.id: row.common for row in stored.rows} == {c: now[c][0] for c in (row.config.id for row in stored.rows)}
        for row in stored.rows:
            for cell, judged in zip(row.cells, now[row.config.id][1]):
                got = (cell.old, cell.new, cell.change, cell.tone, cell.noise)
                assert got == (judged.old, judged.new, judged.change, judged.tone, judged.noise), (machine_class, row.label, cell.figure.key)
                tones.add(cell.tone)
    assert {"", "too_noisy"} <= tones  # judged by the noise rule: the cpu class's compile times too noisy to track
    assert client.get("/").status_code == 200


def cells_of(block) -> dict:
    return {row.config.id: [(c.old, c.new, c.change, c.tone, c.noise) for c in row.cells] for row in block.rows}


def test_cells_whose_inputs_changed_are_judged_again():
    ingest_build(1, cases(speedup=2.0))
    ingest_build(2, cases(speedup=2.0))
    before = cells_of(overview_list(cells=home_cells)[0])
    first = HomeCellSet.objects.get()
    ingest_build(2, cases(speedup=3.0))  # a second run of the head: its counts change, so do the inputs
    after = overview_list(cells=home_cells)[0]
    assert HomeCellSet.objects.get().inputs != first.inputs and cells_of(after) != before
    now = judged_now("cpu")
    assert cells_of(after) == {c: [(j.old, j.new, j.change, j.tone, j.noise) for j in cells] for c, (_, cells) in now.items()}
