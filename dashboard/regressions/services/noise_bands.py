"""/compare/'s noise bands, stored (#17 at 1,000,000 results): the bands of every series of a machine
class over one window of builds (``regressions.noise.band_window``) are computed once
(``window_noise_bands``: ~9 s of Python and SQL at 1,920 series x 30 builds) and kept in a
``NoiseBandSet``; a compare reads that one row while the window's inputs are unchanged.

Filled after each ingest (the pipeline's ``regressions.noise_bands`` task: the new build's window,
which the next build is compared against, and the one before, which the new build is compared
against; the sets of later builds whose window holds the build and changed are dropped, then every
build's set still missing is stored, each class's newest first, ``noise_bands_fill``: the sets dropped, builds
stored before, a bulk import; the task sends itself on until none is missing), by a beat sweep that
does the same, and by the first compare that finds none (a base the pipeline has not reached yet; a
head older than its base reads its own window's set, ``compare_band_window``). A fill reads each build's points once for the windows that share
it (``noise.WindowPoints``: ~1 s a window instead of ~8 at 1,000,000 results). The stored bands are the full computation's, to the bit (float64
bytes): a compare judges every change exactly as it would without them.
"""
from __future__ import annotations

import logging
import time

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from dashboard.regressions.models import NoiseBandSet
from dashboard.regressions.noise import PRIOR_BUILDS, BandWindow, WindowPoints, band_window, window_noise_bands
from dashboard.results.models import Build, BuildSummary, Run
from dashboard.results.selectors.builds import build_summary_get, build_summary_previous
from dashboard.results.selectors.common import METRICS
from dashboard.results.selectors.compare import NoiseBands

log = logging.getLogger(__name__)


def compare_band_window(*, machine_class: str, base: Build, head: Build) -> BandWindow:
    """The window whose bands judge ``head`` against ``base``: the newest builds up to the older of
    the two, without the newer (the change judged). A head newer than its base: the base's window
    (the head is none of its builds but a variant's); a head older than its base and one of its
    window's builds: the head's own window, the one the compare the other way round reads (both read
    alike), stored for every build like any base's, where the base's window less the head would be a
    window of its own, computed on request (8-18 s at 1,000,000 results). A head older than the whole
    window is none of its builds and keeps the base's, as before."""
    window = band_window(machine_class=machine_class, upto=base, without_build=head.id, metrics=METRICS)
    builds = window.prior_builds
    if window.without is not None and base.id in builds and builds.index(head.id) > builds.index(base.id):
        return band_window(machine_class=machine_class, upto=head, without_build=base.id, metrics=METRICS)
    return window


def noise_bands_for_compare(*, machine_class: str, base: Build, head: Build) -> NoiseBands:
    """Per series, its noise bands over ``compare_band_window``: the stored set when its inputs are
    unchanged, else computed and stored."""
    window = compare_band_window(machine_class=machine_class, base=base, head=head)
    stored = _stored(window)
    if stored is None:
        stored = _compute_and_store(window)
    bands, default = stored
    return lambda series_id: bands.get(series_id, default)


def noise_bands_of_build(*, machine_class: str, build_id: int) -> NoiseBands:
    """Per series, its noise bands from its newest builds up to ``build_id`` (the window the pipeline
    stores after the build's ingest: /dynamic/ judges one build's compile-time ratios by it)."""
    build = Build.objects.only("id", "ordered_at").get(pk=build_id)
    window = band_window(machine_class=machine_class, upto=build, without_build=None, metrics=METRICS)
    bands, default = _stored(window) or _compute_and_store(window)
    return lambda series_id: bands.get(series_id, default)


def noise_bands_refresh(*, run_id) -> dict:
    """After a run of a build is stored and detected: the bands of the build's window on the run's
    machine class (the next build is compared against it) and of the window before it (the build is
    compared against the one before), each computed only when missing or stale. Returns the ids of
    the base builds whose bands were computed."""
    run = Run.objects.select_related("build", "machine").get(pk=run_id)
    build, machine_class = run.build, run.machine.machine_class
    summary = build_summary_get(build_id=build.id, machine_class=machine_class)
    if summary is None:
        return {"computed": []}
    previous = build_summary_previous(summary=summary)
    bases = [build] + ([previous.build] if previous else [])
    points = WindowPoints(machine_class)  # the two windows share all but one build
    computed = [base.id for base in bases if noise_bands_store(machine_class=machine_class, base=base, points=points)]
    return {"computed": computed, "dropped": noise_bands_drop_stale_after(machine_class=machine_class, build=build)}


def noise_bands_drop_stale_after(*, machine_class: str, build: Build) -> list[int]:
    """The stored sets of the ``PRIOR_BUILDS`` builds after ``build`` whose window holds it and whose
    inputs changed (a re-run of it, or it ingested late): deleted (a stale set is never served), so
    ``noise_bands_fill`` computes them again, the post-ingest task right after this (for its budget,
    then sent on), before any compare has to. Returns the ids of their bases."""
    later = list(BuildSummary.objects.filter(machine_class=machine_class, ordered_at__gte=build.ordered_at)
                 .exclude(build_id=build.id).order_by("ordered_at", "build_id")
                 .values_list("build_id", flat=True)[:PRIOR_BUILDS])
    sets = NoiseBandSet.objects.filter(machine_class=machine_class, upto_id__in=later, without__isnull=True).select_related("upto")
    stale = [row.upto_id for row in sets
             if band_window(machine_class=machine_class, upto=row.upto, without_build=None, metrics=METRICS).inputs != row.inputs]
    NoiseBandSet.objects.filter(machine_class=machine_class, upto_id__in=stale).delete()
    return stale


def noise_bands_fill(*, budget_s: float, now=time.monotonic) -> dict:
    """The bands of every build that can be a base and has none stored (builds stored before the
    pipeline kept them, a bulk import, sets dropped stale by a late or repeated run), each class's newest first,
    until ``budget_s`` has passed: a compare against any base then reads one row instead of computing
    its window (7.8-16 s at 1,000,000 results). The pipeline's post-ingest task runs it after the new
    build's bands and sends itself on while some are missing (``regressions.noise_bands_fill``), the
    beat sweep (``regressions.noise_bands_sweep``) likewise. Each class's points are read once per
    build for the windows that share it (``WindowPoints``). Returns the counts."""
    started = now()
    stored = NoiseBandSet.objects.filter(machine_class=OuterRef("machine_class"), upto_id=OuterRef("build_id"), without__isnull=True)
    # Class by class (one class's points held at a time: a window's worth, as computing it alone), newest first.
    missing = (BuildSummary.objects.filter(~Exists(stored)).select_related("build")
               .order_by("machine_class", "-ordered_at", "-build_id"))
    computed = 0
    points = None
    for summary in missing.iterator(chunk_size=100):
        if now() - started > budget_s:
            break
        if points is None or points.machine_class != summary.machine_class:
            points = WindowPoints(summary.machine_class)
        computed += noise_bands_store(machine_class=summary.machine_class, base=summary.build, points=points)
    return {"computed": computed, "missing": missing.count()}


def noise_bands_store(*, machine_class: str, base: Build, points: WindowPoints | None = None) -> bool:
    """The bands of every compare against ``base`` by a newer head, stored unless they already are
    (and their inputs are unchanged). True when they were computed. ``points``: the class's points
    kept across the windows of a sweep."""
    window = band_window(machine_class=machine_class, upto=base, without_build=None, metrics=METRICS)
    if _fresh(window).exists():
        return False
    _compute_and_store(window, points=points)
    return True


def _fresh(window: BandWindow):
    """The stored set of this window, if its inputs are unchanged."""
    return NoiseBandSet.objects.filter(machine_class=window.machine_class, upto_id=window.upto, without_id=window.without,
                                       inputs=window.inputs)


def _stored(window: BandWindow) -> tuple[dict[int, dict[str, float]], dict[str, float]] | None:
    row = _fresh(window).values_list("metrics", "series", "bands").first()
    if row is None:
        return None
    names, series, bands = row
    ids = np.frombuffer(bytes(series), dtype=np.int64).tolist()
    values = np.frombuffer(bytes(bands), dtype=np.float64).reshape(len(ids), len(names)).tolist()
    by_series = {series_id: dict(zip(names, row_values)) for series_id, row_values in zip(ids, values)}
    return by_series, by_series.pop(0)


def _compute_and_store(window: BandWindow, points: WindowPoints | None = None) -> tuple[dict[int, dict[str, float]], dict[str, float]]:
    noisy = [m for m in METRICS if m.noisy]
    bands, default = window_noise_bands(window=window, metrics=noisy, points=points)
    names = [m.name for m in noisy]
    ids = [*bands, 0]  # 0: no series has it; the bands of a series without points
    table = np.array([[b[name] for name in names] for b in (*bands.values(), default)], dtype=np.float64)
    fields = {"inputs": window.inputs, "metrics": names, "series": np.asarray(ids, dtype=np.int64).tobytes(),
              "bands": table.tobytes()}
    try:
        with transaction.atomic():
            NoiseBandSet.objects.update_or_create(machine_class=window.machine_class, upto_id=window.upto,
                                                  without_id=window.without, defaults=fields)
    except IntegrityError:  # another request stored the same window meanwhile: its bands are these
        log.info("noise bands of %s up to build %s stored concurrently", window.machine_class, window.upto)
    return bands, default
