"""/compare/'s judged comparison of each machine class's latest build against its previous one,
stored (issue #46 item 13): judging that pair reads both builds' 1,920 cases, their bands, the
findings between them and the series' histories for the reasons (a cold ``/compare/`` ~0.5 s of its
~0.55 s at 1,000,000 results). ``compare_judged`` serves it from the class's ``CompareCellSet``
while its inputs are unchanged, else judges it (``regressions.compare.builds_compare_judged``) and,
for the class's latest pair by the default metric and threshold, stores it: the pipeline does so
after each ingest, once the bands are stored (``compare_cells_refresh``), so the first ``/compare/``
after an ingest reads one row. The stored cells are the judged ones to the bit (JSON floats
round-trip; NaN and the infinities as Python's json writes them).
"""
from __future__ import annotations

import hashlib
import json
import logging

from django.db import IntegrityError, transaction
from django.db.models import Count, Max

from dashboard.regressions.compare import builds_compare_judged
from dashboard.regressions.models import CompareCellSet, Regression
from dashboard.regressions.services.noise_bands import compare_band_window
from dashboard.results.models import Build, Config, Run
from dashboard.results.selectors.builds import build_summary_latest, build_summary_previous
from dashboard.results.selectors.compare import Change, Comparison, CompareRow, OneSided, compare_summary

log = logging.getLogger(__name__)
CELLS_VERSION = 1  # bump when builds_compare_judged judges differently: sets stored before are judged again
METRIC, THRESHOLD = "speedup", 0.05  # /compare/'s defaults: the pair stored is judged by them
CHANGE_FIELDS = ("old", "new", "change", "tone", "noise", "sd", "finding", "reason", "borrowed")  # Change's, in order


def compare_judged(*, base: Build, head: Build, machine_class: str, metric: str = METRIC,
                   threshold: float = THRESHOLD) -> Comparison:
    """``builds_compare_judged``: the class's stored set where it holds this pair, metric and
    threshold and its inputs are unchanged; else judged, and stored when the pair is the class's
    latest build against its previous one by the default metric and threshold."""
    stored = (CompareCellSet.objects.filter(machine_class=machine_class, base=base, head=head, metric=metric, threshold=threshold)
              .values_list("inputs", "comparison").first())
    inputs = _inputs(machine_class=machine_class, base=base, head=head, metric=metric, threshold=threshold) if stored else None
    if stored is not None and stored[0] == inputs:
        return _decode(stored[1], base=base, head=head, machine_class=machine_class, metric=metric, threshold=threshold)
    comparison = builds_compare_judged(base=base, head=head, machine_class=machine_class, metric=metric, threshold=threshold)
    if (metric, threshold) == (METRIC, THRESHOLD) and _is_latest_pair(machine_class, base=base, head=head):
        _store(comparison, inputs or _inputs(machine_class=machine_class, base=base, head=head, metric=metric, threshold=threshold))
    return comparison


def compare_cells_refresh(*, run_id) -> bool:
    """After a run is stored and its bands are (``noise_bands_refresh``): the comparison of its
    machine class's latest build against the previous one, judged unless stored with unchanged
    inputs. True when it was judged."""
    machine_class = Run.objects.filter(pk=run_id).values_list("machine__machine_class", flat=True).first()
    return machine_class is not None and compare_cells_store(machine_class=machine_class)


def compare_cells_store(*, machine_class: str) -> bool:
    """The class's latest build against the previous one, judged by the default metric and
    threshold and stored unless stored with unchanged inputs (``bench/dashboard_load.py`` calls it
    as the pipeline would). True when it was judged."""
    pair = _latest_pair(machine_class)
    if pair is None:
        return False
    base, head = pair
    inputs = _inputs(machine_class=machine_class, base=base, head=head, metric=METRIC, threshold=THRESHOLD)
    if CompareCellSet.objects.filter(machine_class=machine_class, base=base, head=head, metric=METRIC, threshold=THRESHOLD,
                                     inputs=inputs).exists():
        return False
    _store(builds_compare_judged(base=base, head=head, machine_class=machine_class, metric=METRIC, threshold=THRESHOLD), inputs)
    return True


def _is_latest_pair(machine_class: str, *, base: Build, head: Build) -> bool:
    """Whether (base, head) is ``_latest_pair``: the build before the latest read only where the head
    is the latest (a random pair's compare asks one query, not two)."""
    latest = build_summary_latest(machine_class=machine_class)
    if latest is None or latest.build_id != head.id:
        return False
    previous = build_summary_previous(summary=latest)
    return previous is not None and previous.build_id == base.id


def _latest_pair(machine_class: str) -> tuple[Build, Build] | None:
    """(the build before the class's latest, the latest), or None with fewer than two."""
    latest = build_summary_latest(machine_class=machine_class)
    previous = build_summary_previous(summary=latest) if latest else None
    return (previous.build, latest.build) if previous else None


def _inputs(*, machine_class: str, base: Build, head: Build, metric: str, threshold: float) -> str:
    """What the comparison is judged from: the bands' window (its builds and their counts: the
    base's cases among them), the class's runs (the head's cases; a late run of any build moves a
    series' history, which the reasons count), the findings between the two builds (a triage that
    makes one invalid unlinks its cells), the judging's version."""
    window = compare_band_window(machine_class=machine_class, base=base, head=head)
    runs = Run.objects.filter(machine__machine_class=machine_class).aggregate(n=Count("id"), at=Max("ingested_at"))
    between = Build.objects.filter(ordered_at__gt=base.ordered_at, ordered_at__lte=head.ordered_at)
    findings = list(Regression.objects.filter(series__machine_class=machine_class, first_bad_build__in=between)
                    .exclude(status=Regression.Status.INVALID).order_by("id").values_list("id", "series_id", "metric"))
    key = repr((CELLS_VERSION, machine_class, base.id, head.id, metric, threshold, window.inputs, runs["n"], str(runs["at"]), findings))
    return hashlib.sha1(key.encode()).hexdigest()


def _store(comparison: Comparison, inputs: str) -> None:
    fields = {"base": comparison.base, "head": comparison.head, "metric": comparison.metric, "threshold": comparison.threshold,
              "inputs": inputs, "comparison": _encode(comparison)}
    try:
        with transaction.atomic():
            CompareCellSet.objects.update_or_create(machine_class=comparison.machine_class, defaults=fields)
    except IntegrityError:  # another request stored it meanwhile: it is this one
        log.info("compare cells of %s stored concurrently", comparison.machine_class)


def _encode(comparison: Comparison) -> str:
    rows = [[r.series_id, r.workload, r.config, r.base_status, r.head_status, r.base_result_id, r.head_result_id,
             r.cfg.id if r.cfg is not None else None, sorted(r.flags), r.status_finding, r.status_reason,
             [[name, *(getattr(c, f) for f in CHANGE_FIELDS)] for name, c in r.changes.items()]] for r in comparison.rows]
    sided = {side: [[o.workload, o.config, o.status, o.result_id] for o in getattr(comparison, side)] for side in ("only_base", "only_head")}
    summary = compare_summary(rows=comparison.rows, threshold=comparison.threshold)  # the page's geomean row, every row
    return json.dumps({"rows": rows, **sided, "summary": [[name, *(getattr(c, f) for f in CHANGE_FIELDS)] for name, c in summary.items()]})


def _decode(text: str, *, base: Build, head: Build, machine_class: str, metric: str, threshold: float) -> Comparison:
    stored = json.loads(text)
    configs = {c.id: c for c in Config.objects.all()}
    rows = [CompareRow(series_id=series_id, workload=workload, config=config, base_status=base_status, head_status=head_status,
                       base_result_id=base_result_id, head_result_id=head_result_id, cfg=configs.get(config_id),
                       changes={name: Change(*values) for name, *values in changes},
                       flags=set(flags), status_finding=status_finding, status_reason=status_reason)
            for (series_id, workload, config, base_status, head_status, base_result_id, head_result_id, config_id, flags,
                 status_finding, status_reason, changes) in stored["rows"]]
    return Comparison(base=base, head=head, machine_class=machine_class, metric=metric, threshold=threshold, rows=rows,
                      only_base=[OneSided(*o) for o in stored["only_base"]], only_head=[OneSided(*o) for o in stored["only_head"]],
                      summary={name: Change(*values) for name, *values in stored["summary"]})
