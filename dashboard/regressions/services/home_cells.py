"""The home page's judged cells, stored (docs/noise-and-findings.md): judging a class's latest build
against its previous one reads both builds' cases and /compare/'s noise bands of the pair (``/``
cold at 16,000 results: ~100 -> ~190 ms p95 when judged on every read). ``home_cells`` serves them
from the class's ``HomeCellSet`` while its inputs are unchanged, else judges them
(``results.selectors.overview.class_cells``, every configuration) and stores them: the pipeline
does so after each ingest, once the bands are stored (``home_cells_refresh``), so the first ``/``
after an ingest reads one row. The stored cells are the judged ones to the bit (JSON floats
round-trip; a non-finite one is kept as its name).
"""
from __future__ import annotations

import hashlib
import logging
import math

from django.db import IntegrityError, transaction

from dashboard.regressions.models import HomeCellSet
from dashboard.regressions.noise import band_window
from dashboard.regressions.services.noise_bands import noise_bands_for_compare
from dashboard.results.models import Build, BuildSummary, Run
from dashboard.results.selectors.builds import build_summary_latest, build_summary_previous
from dashboard.results.selectors.common import METRICS
from dashboard.results.selectors.overview import FIGURES, Cell, class_cells

log = logging.getLogger(__name__)
CELLS_VERSION = 2  # bump when class_cells judges differently: stored cells of an older judging are judged again
# 2: ratio bands (contract.findings.past_bar) and too noisy greying only what is within it (issue #42)
FIELDS = ("old", "new", "change", "tone", "noise")


def home_cells(*, machine_class: str, base: Build, head: Build) -> dict[int, tuple[int, list[Cell]]]:
    """Per config id, (cases present in both builds, one Cell per figure without its value): stored
    when the inputs are unchanged, else judged and stored."""
    inputs = _inputs(machine_class=machine_class, base=base, head=head)
    row = HomeCellSet.objects.filter(machine_class=machine_class, base=base, head=head, inputs=inputs).values_list("cells", flat=True).first()
    if row is not None:
        return _decode(row)
    return _judge_and_store(machine_class=machine_class, base=base, head=head, inputs=inputs)


def home_cells_refresh(*, run_id) -> bool:
    """After a run is stored and its bands are (``noise_bands_refresh``): the cells of its machine
    class's latest build against the previous one, judged unless stored with unchanged inputs. True
    when they were judged."""
    machine_class = Run.objects.filter(pk=run_id).values_list("machine__machine_class", flat=True).first()
    return machine_class is not None and home_cells_store(machine_class=machine_class)


def home_cells_store(*, machine_class: str) -> bool:
    """The cells of the class's latest build against the previous one, judged and stored unless
    stored with unchanged inputs (``bench/dashboard_load.py`` calls it as the pipeline would). True
    when they were judged."""
    latest = build_summary_latest(machine_class=machine_class)
    previous = build_summary_previous(summary=latest) if latest else None
    if previous is None:
        return False
    base, head = previous.build, latest.build
    inputs = _inputs(machine_class=machine_class, base=base, head=head)
    if HomeCellSet.objects.filter(machine_class=machine_class, base=base, head=head, inputs=inputs).exists():
        return False
    _judge_and_store(machine_class=machine_class, base=base, head=head, inputs=inputs)
    return True


def _inputs(*, machine_class: str, base: Build, head: Build) -> str:
    """What the cells are judged from: the bands' window (its builds and counts: the base's cases
    among them), the head's counts (a re-run, a partial run completed), the judging's version."""
    window = band_window(machine_class=machine_class, upto=base, without_build=head.id, metrics=METRICS)
    counts = BuildSummary.objects.filter(build=head, machine_class=machine_class).values_list("runs", "latest_run_id", "cases", "passed").first()
    key = repr((CELLS_VERSION, [f.key for f in FIGURES], machine_class, base.id, head.id, window.inputs,
                counts and tuple(map(str, counts))))
    return hashlib.sha1(key.encode()).hexdigest()


def _judge_and_store(*, machine_class: str, base: Build, head: Build, inputs: str) -> dict[int, tuple[int, list[Cell]]]:
    bands = noise_bands_for_compare(machine_class=machine_class, base=base, head=head)
    judged = class_cells(machine_class=machine_class, base_id=base.id, head_id=head.id, bands=bands)
    fields = {"base": base, "head": head, "inputs": inputs, "cells": _encode(judged)}
    try:
        with transaction.atomic():
            HomeCellSet.objects.update_or_create(machine_class=machine_class, defaults=fields)
    except IntegrityError:  # another request stored them meanwhile: they are these
        log.info("home cells of %s stored concurrently", machine_class)
    return judged


def _number(value):
    return value if not isinstance(value, float) or math.isfinite(value) else repr(value)  # 'inf', '-inf', 'nan'


def _float(value):
    return float(value) if isinstance(value, str) else value


def _encode(judged: dict[int, tuple[int, list[Cell]]]) -> dict:
    return {str(config_id): [common, [[_number(getattr(cell, f)) if f != "tone" else cell.tone for f in FIELDS] for cell in cells]]
            for config_id, (common, cells) in judged.items()}


def _decode(stored: dict) -> dict[int, tuple[int, list[Cell]]]:
    out = {}
    for config_id, (common, cells) in stored.items():
        out[int(config_id)] = (common, [Cell(figure=figure, value=None, old=_float(old), new=_float(new), change=_float(change),
                                             tone=tone, noise=_float(noise))
                                        for figure, (old, new, change, tone, noise) in zip(FIGURES, cells)])
    return out
