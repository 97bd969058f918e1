"""The workload page: each configuration's latest figures, and one series' whole history (trends
with noise bands, graph-break and recompile reasons with the build that first showed each, the
status history)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Exists, F, Max, OuterRef, Window
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, RowNumber

from contract.case_config import SHOWN_AXES
from dashboard.results.aggregates import median_interval
from dashboard.results.host import COMPILED_HOST_SHARE, HOST_PROBE_MS
from dashboard.results.models import Result, Run, Series, Workload
from dashboard.results.selectors.common import METRICS, NotFound, ref_for
from dashboard.results.variants import PLAIN_BUILD


def workload_get(*, name: str) -> Workload:
    workload = Workload.objects.filter(name=name).first()
    if workload is None:
        raise NotFound(f"no workload {name!r}")
    return workload


def workload_series(*, workload: Workload) -> list[Series]:
    """Every series of a workload (each config on each machine class), with its config."""
    return list(Series.objects.filter(workload=workload).select_related("config").order_by("machine_class", "config_id"))


def workload_classes_newest(*, workload: Workload) -> list[str]:
    """The machine classes that measured the workload, the one with the most recent run first (its
    page opens there: llama_decode's newest data is the H100's, not the CPU's)."""
    # The runs with a result of the workload (one probe of ``result_unique_case_per_run`` per run, not
    # every result of the workload read: 42 -> 4 ms at 1,000,000 results); a result's build and
    # class are its run's.
    rows = (
        Run.objects.filter(Exists(Result.objects.filter(run_id=OuterRef("pk"), workload=workload)), build__overrides={})
        .values("machine__machine_class")
        .annotate(newest=Max(Coalesce("started_at", "ingested_at")))
        .order_by("-newest", "machine__machine_class")
    )
    return [row["machine__machine_class"] for row in rows]


def workload_latest(*, workload: Workload, machine_class: str) -> list[Result]:
    """The latest result of each of the workload's series on a machine class: the newest build,
    the result stored last of it (a window over the ``result_series_build`` index's rows)."""
    newest = Window(
        RowNumber(),
        partition_by=[F("series_id")],
        order_by=[F("build__ordered_at").desc(), F("build_id").desc(), F("id").desc()],
    )
    rows = (
        Result.objects.filter(PLAIN_BUILD, series__workload=workload, series__machine_class=machine_class)
        .annotate(newest=newest)
        .filter(newest=1)
        .annotate(implementation=KT("environment__implementation"), error_type=KT("error__type"), error_message=KT("error__message"))
        .select_related("config", "build", "run")
        .defer("samples", "environment", "graph_breaks", "recompiles", "error")
    )
    return sorted(rows, key=lambda r: [getattr(r.config.case_config, axis) for axis in SHOWN_AXES])


@dataclass
class Point:
    result_id: int
    run_id: str
    build_id: int
    ref: str
    at: dt.datetime
    status: str
    values: dict  # metric name -> value
    speedup_noise: float | None
    eager_latency_ms: float | None
    bands: dict  # metric name -> (low, high)
    host_probe_ms: float | None = None  # the runner's host probe (median), GPU results
    compiled_host_share: float | None = None  # host enqueue over device time, compiled side
    version: str = ""  # the build's torch version
    runs: list[dict] = field(default_factory=list)  # every run of the build: metric name -> value (oldest first)
    compile_phases: dict = field(default_factory=dict)  # the result's compile by phase (contract.phases, docs/explain.md)


@dataclass
class Reason:
    kind: str  # "graph break" or "recompile"
    reason: str
    location: str
    first: Point
    last: Point
    seen: int  # in how many builds
    current: bool  # present in the newest build


@dataclass
class Segment:
    status: str
    first: Point
    last: Point
    builds: int


@dataclass
class SeriesHistory:
    series: Series
    points: list[Point] = field(default_factory=list)  # oldest first, one per build
    reasons: list[Reason] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)  # status history, newest first
    latest: Result | None = None


def series_history(*, series: Series) -> SeriesHistory:
    """One series over every build (the ``result_series_build`` index), one point per build (the
    result stored last when a build ran twice)."""
    metric_names = [m.name for m in METRICS]
    rows = (
        Result.objects.filter(PLAIN_BUILD, series=series)
        .order_by("build__ordered_at", "build_id", "id")
        .annotate(host_probe=HOST_PROBE_MS, host_share=COMPILED_HOST_SHARE)
        .values(
            "id", "run_id", "build_id", "build__git_sha", "build__local_label", "build__ordered_at", "build__torch_version", "status",
            "speedup_noise", "eager_latency_ms", "samples", "graph_breaks", "recompiles", "host_probe",
            "host_share", "compile_phases", *metric_names,
        )
    )
    per_build: dict[int, dict] = {}
    runs: dict[int, list[dict]] = {}  # each build's runs, for the run-to-run spread
    for row in rows:
        per_build.pop(row["build_id"], None)  # keep insertion order by the latest run's position
        per_build[row["build_id"]] = row
        runs.setdefault(row["build_id"], []).append(
            {**{m: row[m] for m in metric_names}, "eager_latency_ms": row["eager_latency_ms"], "status": row["status"]})
    history = SeriesHistory(series=series)
    seen: dict[tuple, Reason] = {}
    for row in per_build.values():
        samples = row["samples"] or {}
        bands = {}
        for metric, key in (("compiled_latency_ms", "compiled_ms"), ("eager_latency_ms", "eager_ms")):
            interval = median_interval(samples.get(key)) if isinstance(samples, dict) else None
            if interval:
                bands[metric] = interval
        point = Point(
            result_id=row["id"], run_id=str(row["run_id"]), build_id=row["build_id"],
            ref=ref_for(git_sha=row["build__git_sha"], local_label=row["build__local_label"]),
            at=row["build__ordered_at"], status=row["status"], values={m: row[m] for m in metric_names},
            speedup_noise=row["speedup_noise"], eager_latency_ms=row["eager_latency_ms"], bands=bands,
            host_probe_ms=row["host_probe"], compiled_host_share=row["host_share"], version=row["build__torch_version"],
            runs=runs[row["build_id"]], compile_phases=row["compile_phases"] or {},
        )
        history.points.append(point)
        _note_reasons(seen, point, row["graph_breaks"], row["recompiles"])
        if history.segments and history.segments[-1].status == point.status:
            history.segments[-1].last = point
            history.segments[-1].builds += 1
        else:
            history.segments.append(Segment(status=point.status, first=point, last=point, builds=1))
    newest = history.points[-1] if history.points else None
    for reason in seen.values():
        reason.current = reason.last is newest
    history.reasons = sorted(seen.values(), key=lambda r: (not r.current, r.first.at, r.kind, r.reason), reverse=False)
    history.segments.reverse()
    if newest is not None:
        history.latest = Result.objects.select_related("build", "run", "config", "workload").get(pk=newest.result_id)
    return history


def _note_reasons(seen: dict, point: Point, graph_breaks, recompiles) -> None:
    items = [("graph break", gb) for gb in graph_breaks or [] if isinstance(gb, dict)]
    items += [("recompile", rc) for rc in recompiles or [] if isinstance(rc, dict)]
    for kind, item in items:
        key = (kind, str(item.get("reason", "")), str(item.get("location", "") or ""))
        reason = seen.get(key)
        if reason is None:
            seen[key] = Reason(kind=kind, reason=key[1], location=key[2], first=point, last=point, seen=1, current=False)
        elif reason.last is not point:
            reason.last = point
            reason.seen += 1


@dataclass
class Spread:
    """The run-to-run spread of one metric over builds measured more than once: the pooled relative
    sd of the runs of one build around their mean (each build's own level taken out)."""
    sd: float | None  # relative, 0.012 = 1.2 %
    runs: int  # runs of the builds measured more than once
    builds: int  # builds measured more than once


def run_spread(*, points: list[Point], metric: str) -> Spread:
    squares = dof = runs = builds = 0
    for point in points:
        values = [r[metric] for r in point.runs if r["status"] == "pass" and r.get(metric) is not None]
        if len(values) < 2:
            continue
        mean = sum(values) / len(values)
        if mean == 0:
            continue
        squares += sum((v / mean - 1) ** 2 for v in values)
        dof += len(values) - 1
        runs += len(values)
        builds += 1
    return Spread(sd=(squares / dof) ** 0.5 if dof else None, runs=runs, builds=builds)
