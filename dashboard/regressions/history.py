"""Reads one series' history in build order: the points that detection and the verdict work on.

A point is one build. When a build was measured more than once (a re-run, a re-measurement), its
value is the median of the passing runs and its samples keep one list per run.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace

from contract.metrics import ALARMING, TRACKED
from detection import speedup_replicates
from dashboard.results.host import (
    COMPILED_HOST_SHARE,
    HOST_PROBE_MS,
    is_host_bound,
    slowed,
)
from dashboard.results.compile_reference import REFERENCED_METRICS
from dashboard.results.models import Result
from dashboard.results.sourced_metrics import with_sourced_metrics
from dashboard.results.variants import PLAIN_BUILD, SERIES_RUNS

# The noisy metrics detection watches, with their direction (higher or lower is better): contract.metrics.
TRACKED_METRICS = {m.name: m.direction for m in TRACKED}
# Those of them that raise findings and verdicts (a compile phase explains its total's: contract.metrics).
ALARM_METRICS = {m.name: m.direction for m in ALARMING}
# A tracked metric's companion timed in the same blocks (contract.metrics ``shared_with``): points carry it too.
SHARED_WITH = {m.name: m.shared_with for m in TRACKED if m.shared_with}
_POINT_METRICS = (*TRACKED_METRICS, *(m for m in dict.fromkeys(SHARED_WITH.values()) if m not in TRACKED_METRICS))
_CASE_FIELDS = ("status", "graph_breaks", "recompiles", "recompile_count", "graph_break_count", "error")


@dataclass
class Point:
    build_id: int
    values: dict[str, float | None] = field(default_factory=dict)
    samples: dict[str, list[list[float]]] = field(default_factory=dict)  # per run, where stored
    run_values: dict[str, list[float]] = field(default_factory=dict)  # per passing run
    case: dict = field(default_factory=dict)  # the newest run's case, for deterministic findings
    run_ids: list = field(default_factory=list)
    # The host while the passing runs were timed (GPU runs; runner environment.timing): the median of
    # their median host probes, and whether every one of them was host-bound on the compiled side.
    host_probe_ms: float | None = None
    host_bound: bool = False
    # The compile reference its compile_cpu_ratio was measured against (Result.compile_reference;
    # runs of the build against another reference are left out of its value: the newest run's wins).
    compile_reference: str = ""
    # Each passing run's own stated speedup interval (Result.speedup_noise, a relative 95 % half-width):
    # what the runner says of its blocks' scatter (detection's "too noisy to track", contract.findings).
    speedup_noises: list[float] = field(default_factory=list)
    # Per metric, the within-run standard error of its samples (``noise.point_noise``), once computed:
    # a point shared by many windows of noise bands (``noise.WindowPoints``) is not computed again.
    ses: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def reference(self, metric: str) -> str | None:
        """The reference ``metric`` was measured against; None for a metric without one."""
        return self.compile_reference if metric in REFERENCED_METRICS else None


def metric_samples(metric: str, samples: dict) -> list[float] | None:
    """A run's replicate samples of ``metric`` (per-block values), where the runner stores them."""
    eager, compiled = samples.get("eager_ms") or [], samples.get("compiled_ms") or []
    if metric == "speedup" and eager and compiled:
        return speedup_replicates(eager, compiled)
    if metric == "compiled_latency_ms" and compiled:
        return list(compiled)
    return None


def series_points(*, series_id: int, excluded: set[tuple[str, int]] = frozenset()) -> list[Point]:
    """Every build with a result on the series, oldest first. ``excluded``: (metric, build id) pairs
    triaged as invalid: their value is dropped so they never enter a baseline again."""
    rows = Result.objects.filter(PLAIN_BUILD, SERIES_RUNS, series_id=series_id).order_by("build__ordered_at", "build_id", "run__ingested_at")
    points = points_from_rows(_with_host(rows).values(*_ROW_FIELDS))
    for point in points:
        for metric in TRACKED_METRICS:
            if (metric, point.build_id) in excluded:
                point.values[metric] = None
                point.samples.pop(metric, None)
                point.run_values.pop(metric, None)
    return points


def class_series_points(*, build_ids: list[int], machine_class: str) -> dict[int, list[Point]]:
    """Every series of the machine class over these builds (plain builds only), in one query:
    ``{series_id: [Point, ...]}`` oldest build first, as ``series_points`` gives one series, less
    each point's case (its reasons and error, JSON not parsed for ~57,000 rows): the noise model's
    inputs (/compare/'s noise bands)."""
    rows = _with_host(
        Result.objects.filter(PLAIN_BUILD, SERIES_RUNS, build_id__in=build_ids, series__machine_class=machine_class)
        .order_by("series_id", "build__ordered_at", "build_id", "run__ingested_at")
    ).values("series_id", *_NOISE_ROW_FIELDS)
    by_series: dict[int, list[dict]] = {}
    for row in rows:
        by_series.setdefault(row["series_id"], []).append(row)
    return {sid: points_from_rows(series_rows) for sid, series_rows in by_series.items()}


def build_points(*, build_ids: list[int], machine_class: str) -> dict[int, dict[int, Point]]:
    """The points of these builds on every series of the machine class, in one query:
    ``{series_id: {build_id: Point}}``."""
    rows = _with_host(
        Result.objects.filter(build_id__in=build_ids, series__machine_class=machine_class)
        .order_by("series_id", "build_id", "run__ingested_at")
    ).values("series_id", *_ROW_FIELDS)
    by_series: dict[int, list[dict]] = {}
    for row in rows:
        by_series.setdefault(row["series_id"], []).append(row)
    return {sid: {p.build_id: p for p in points_from_rows(series_rows)} for sid, series_rows in by_series.items()}


_ROW_FIELDS = ("build_id", "run_id", "samples", "host_probe", "host_share", "compile_reference", "speedup_noise",
               *_POINT_METRICS, *_CASE_FIELDS)
_NOISE_ROW_FIELDS = (*_ROW_FIELDS[:-len(_CASE_FIELDS)], "status")


def _with_host(rows):
    return with_sourced_metrics(rows.annotate(host_probe=HOST_PROBE_MS, host_share=COMPILED_HOST_SHARE))


def points_from_rows(rows) -> list[Point]:
    """Rows of one series, ordered by build then ingest time, folded into one point per build."""
    points: list[Point] = []
    passing: dict[str, list[float]] = {}
    hosts: list[tuple[float | None, float | None]] = []  # (probe, compiled share) per passing run
    references: dict[str, list[str]] = {}  # per referenced metric, the compile reference of each passing run with it
    for row in rows:
        if not points or points[-1].build_id != row["build_id"]:
            if points:
                _finish(points[-1], passing, hosts, references)
            points.append(Point(build_id=row["build_id"]))
            passing, hosts, references = {metric: [] for metric in _POINT_METRICS}, [], {}
        point = points[-1]
        point.run_ids.append(row["run_id"])
        point.case = {f: row[f] for f in _CASE_FIELDS if f in row}
        if row["status"] != Result.Status.PASS:
            continue
        hosts.append((row["host_probe"], row["host_share"]))
        if row.get("speedup_noise") is not None:
            point.speedup_noises.append(float(row["speedup_noise"]))
        for metric in _POINT_METRICS:
            value = row.get(metric)  # a row made without the sourced metrics (contract.metrics) has none
            if value is not None and value > 0:
                passing[metric].append(float(value))
                point.run_values.setdefault(metric, []).append(float(value))
                if metric in REFERENCED_METRICS:
                    references.setdefault(metric, []).append(row.get("compile_reference") or "")
            replicate = metric_samples(metric, row["samples"] or {})
            if replicate:
                point.samples.setdefault(metric, []).append(replicate)
    if points:
        _finish(points[-1], passing, hosts, references)
    return points


def _finish(point: Point, passing: dict[str, list[float]], hosts: list[tuple[float | None, float | None]],
            references: dict[str, list[str]]) -> None:
    # One reference per point: the newest run's (a build re-run after the class's reference changed).
    for metric, refs in references.items():
        point.compile_reference = refs[-1]
        if len(set(refs)) > 1:
            passing[metric] = point.run_values[metric] = [v for v, ref in zip(passing[metric], refs) if ref == refs[-1]]
    for metric, values in passing.items():  # one run: its value (statistics.median's, without the sort)
        point.values[metric] = (values[0] if len(values) == 1 else statistics.median(values)) if values else None
    probes = [probe for probe, _ in hosts if probe]
    point.host_probe_ms = statistics.median(probes) if probes else None
    point.host_bound = bool(hosts) and all(is_host_bound(share) for _, share in hosts)


def machine_moved(metric: str, before: list[Point], after: list[Point], *, old: float, new: float) -> dict | None:
    """The change of ``metric``'s companion (``SHARED_WITH``: eager latency beside compiled latency)
    from the ``before`` points to the ``after`` ones (medians) when it goes the same way as
    ``metric``'s own change ``old`` -> ``new`` and covers at least half of it in log: the machine
    moved (clocks, a shared GPU, the host), not the build, and the ratio of the two (speedup) says
    so. None otherwise, or without the companion on both sides."""
    companion = SHARED_WITH.get(metric)
    if companion is None or not old or not new or old <= 0 or new <= 0:
        return None
    was = [p.values[companion] for p in before if p.values.get(companion)]
    now = [p.values[companion] for p in after if p.values.get(companion)]
    if not was or not now:
        return None
    c_old, c_new = statistics.median(was), statistics.median(now)
    own, shared = math.log(new / old), math.log(c_new / c_old)
    if own == 0 or shared / own < 0.5:
        return None
    return {"metric": companion, "before": c_old, "after": c_new, "relative_change": c_new / c_old - 1.0}


def host_slowdown(reference: list[Point], new: list[Point], *, host_work: bool = False) -> dict | None:
    """How much slower the host was on the ``new`` builds than on the ``reference`` ones
    (``dashboard.results.host.slowed``), when every new build was host-bound (or ``host_work``: a
    metric that is host work in any case, compile time): their host-sensitive metrics then say more
    about the host than about the build. None otherwise, or without probes."""
    if not new or not (host_work or all(p.host_bound for p in new)):
        return None
    return slowed([p.host_probe_ms for p in reference], [p.host_probe_ms for p in new])


def reference_breaks(points: list[Point], metric: str) -> list[int]:
    """Indices of the points whose ``metric`` was measured against another compile reference than
    the point with a value before them: where a new baseline of it starts. None for a metric
    without a reference. The noise model leaves the differences across them out."""
    if metric not in REFERENCED_METRICS:
        return []
    out, previous = [], None
    for i, point in enumerate(points):
        if point.values.get(metric) is None:
            continue
        if previous is not None and point.compile_reference != previous:
            out.append(i)
        previous = point.compile_reference
    return out


def comparable_points(points: list[Point], metric: str, *, reference: str | None = None) -> list[Point]:
    """``points`` (positions kept) less their ``metric`` where it was measured against another
    compile reference than ``reference`` (default: the newest point's that has the metric): a
    change of reference starts a new baseline of that metric, so the values before it are not part
    of a newer build's baseline. The same list for a metric without a reference."""
    if metric not in REFERENCED_METRICS:
        return points
    if reference is None:
        reference = next((p.compile_reference for p in reversed(points) if p.values.get(metric) is not None), None)
        if reference is None:
            return points
    return [p if p.values.get(metric) is None or p.compile_reference == reference else _without(p, metric)
            for p in points]


def _without(point: Point, metric: str) -> Point:
    return replace(point, values={**point.values, metric: None},
                   samples={m: s for m, s in point.samples.items() if m != metric},
                   run_values={m: v for m, v in point.run_values.items() if m != metric})
