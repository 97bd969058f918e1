"""Reads for the run-to-run noise model (issue #15 item 1): one series' estimate from its points, and
the prior per machine class and metric pooled from every series of the class
(``detection.replicates``). Detection, both verdicts and the API's +- all use these.
"""
from __future__ import annotations

import hashlib
import math
import statistics
from dataclasses import dataclass

from contract.findings import TWO_RUNS_95, sd_of_halfwidth
from contract.metrics import BY_NAME
from detection import MIN_SERIES_DOF, NoiseEstimate, class_prior, noise_estimate, series_noise, within_run_ses
from dashboard.regressions.history import TRACKED_METRICS, Point, class_series_points, reference_breaks
from dashboard.results.compile_reference import REFERENCED_METRICS
from dashboard.results.models import BuildSummary, Result
from dashboard.results.sourced_metrics import with_sourced_metrics

PRIOR_BUILDS = 30  # newest builds of the machine class that the class prior is learned from
# Part of every stored band set's fingerprint (``BandWindow.inputs``): raise it when the noise model
# changes (here or in ``detection.replicates``), so the sets stored before are computed again.
BANDS_MODEL_VERSION = 6  # 2: compile_cpu_ratio tracked; 3: its noise not across a change of compile reference; 4: its default 1.5 %;
# 5: a class with no series long enough for a prior takes it from its short series (``window_noise_bands``);
# 6: the bands' noise only from repeated runs of one build (``REPEATS_ONLY``), never from differences between builds


def class_priors(*, machine_class: str, upto=None, skip_newest: int = 0, min_residuals: int = MIN_SERIES_DOF,
                 short: bool = False) -> dict[str, float]:
    """Per metric, the upper quartile of the run-to-run sds of the class's series with enough
    history (each series' robust estimate, ``series_noise``; nan: none), over the newest ``PRIOR_BUILDS`` builds of the class (up to the build ``upto`` when
    given, less the ``skip_newest`` newest of those: detection judges a change of the newest one or
    two builds by the noise known before them, never by a prior that the change itself inflated).
    ``min_residuals``: residuals before a series joins the prior (detection, which leaves the newest
    builds out, takes series from ``PRIOR_MIN_RESIDUALS``). Builds are points; runs of one build are
    repeated runs. ``short`` (detection and the verdicts): a metric without such series borrows what
    the class's short series show (``_prior_or_short``)."""
    summaries = BuildSummary.objects.filter(machine_class=machine_class)
    if upto is not None:
        summaries = summaries.filter(ordered_at__lte=upto.ordered_at)
    builds = list(summaries.order_by("-ordered_at", "-build_id").values_list("build_id", flat=True)
                  [skip_newest:skip_newest + PRIOR_BUILDS])
    return _priors_over(machine_class=machine_class, builds=builds, min_residuals=min_residuals, short=short)


def _priors_over(*, machine_class: str, builds: list[int], min_residuals: int, short: bool = False) -> dict[str, float]:
    """``class_priors`` over these builds (newest first). A series' compile_cpu_ratio measured against
    each compile reference is an estimate of its own: no difference across a change of reference."""
    order = {build_id: i for i, build_id in enumerate(reversed(builds))}
    rows = with_sourced_metrics(Result.objects.filter(series__machine_class=machine_class, build_id__in=builds,
                                                      status=Result.Status.PASS)
                                ).values_list("series_id", "build_id", "compile_reference", *TRACKED_METRICS)
    runs: dict[tuple[str, int, str], dict[int, list[float]]] = {}
    for series_id, build_id, reference, *metrics in rows:
        for metric, value in zip(TRACKED_METRICS, metrics):
            if value is not None and value > 0:
                segment = reference if metric in REFERENCED_METRICS else ""
                runs.setdefault((metric, series_id, segment), {}).setdefault(build_id, []).append(float(value))
    per_metric: dict[str, list[tuple[float, int]]] = {}
    for (metric, _, _), by_build in runs.items():
        ordered = [by_build[b] for b in sorted(by_build, key=order.__getitem__)]
        per_metric.setdefault(metric, []).append(
            series_noise([statistics.median(r) for r in ordered], runs=ordered))
    if not short:
        return {metric: class_prior(per_metric.get(metric, []), min_dof=min_residuals) for metric in TRACKED_METRICS}
    return {metric: _prior_or_short(metric, per_metric.get(metric, []), min_residuals) for metric in TRACKED_METRICS}


def _prior_or_short(metric: str, estimates: list[tuple[float, int]], min_residuals: int) -> float:
    """The class prior of a metric from series with ``min_residuals``; where none has as many (a
    young class: a few builds, one run each), the upper quartile of what its short series show (one
    residual is enough) where that is more than
    the metric's default: a young class is judged by the differences its own cases show between
    builds, never by a default far under them (the stored H100 family runs of one build: speedup
    0.55 -> 0.75 -> 0.55 on one model, against a 2 % default). nan where neither is known."""
    prior = class_prior(estimates, min_dof=min_residuals)
    if math.isfinite(prior):
        return prior
    short = class_prior(estimates, min_dof=1)
    return short if math.isfinite(short) and short > BY_NAME[metric].noise_default else math.nan


def point_noise(points: list[Point], metric: str, *, prior: float | None = None, breaks=(),
                repeats_only: bool = False) -> NoiseEstimate:
    """The noise model of one series and metric from its points (build order): consecutive builds,
    repeated runs of a build, floored at the median within-run standard error of its samples. A
    change of compile reference is a break (``history.reference_breaks``): the step it makes in
    compile_cpu_ratio is not noise. ``repeats_only`` (the pages' bands): only repeated runs of a
    build, never the differences between builds."""
    values = [None if repeats_only else p.values.get(metric) for p in points]
    runs = [p.run_values.get(metric) or [] for p in points]
    ses = [se for se in _point_ses(points, metric) if math.isfinite(se)]
    breaks = sorted({*breaks, *reference_breaks(points, metric)})
    return noise_estimate(values, runs, default=BY_NAME[metric].noise_default, breaks=breaks, prior=prior,
                          floor=statistics.median(ses) if ses else None)


def _point_ses(points: list[Point], metric: str) -> list[float]:
    """``within_run_ses`` of the points that have samples of ``metric`` (each point's runs as one),
    each computed once and kept on its point (``Point.ses``: the same number to the bit)."""
    sampled = [p for p in points if p.samples.get(metric)]
    todo = [p for p in sampled if metric not in p.ses]
    for p, se in zip(todo, within_run_ses([[x for run in p.samples[metric] for x in run] for p in todo])):
        p.ses[metric] = se
    return [p.ses[metric] for p in sampled]


def stated_sd(points: list[Point]) -> float | None:
    """The median over these points' passing runs of the sd their own speedup intervals stand for
    (``contract.findings.sd_of_halfwidth``; too noisy to track past ``TOO_NOISY_SD``); None where no
    run stated one."""
    sds = [sd for p in points for sd in map(sd_of_halfwidth, p.speedup_noises) if sd is not None]
    return statistics.median(sds) if sds else None


@dataclass(frozen=True)
class BandWindow:
    """The builds that /compare/'s noise bands of base ``upto`` (less the head ``without``) come
    from, as ``class_priors(upto=...)`` chooses them (less the head), and ``inputs``: a
    fingerprint of what those bands are computed from (the builds, their ``BuildSummary`` counts,
    which every ingest refreshes, the metrics and the noise model's version)."""

    machine_class: str
    upto: int
    without: int | None  # the head, only where leaving it out changes the window (it is one of its builds)
    prior_builds: list[int]  # class_priors(upto=...): the newest PRIOR_BUILDS up to the base, newest first
    band_builds: list[int]  # the series' points: the same less the head
    inputs: str


def band_window(*, machine_class: str, upto, without_build: int | None, metrics) -> BandWindow:
    """One read of the newest ``PRIOR_BUILDS`` + 1 summaries of the class up to ``upto``."""
    rows = list(BuildSummary.objects.filter(machine_class=machine_class, ordered_at__lte=upto.ordered_at)
                .order_by("-ordered_at", "-build_id")
                .values_list("build_id", "runs", "latest_run_id", "cases", "passed")[:PRIOR_BUILDS + 1])
    prior_builds = [r[0] for r in rows[:PRIOR_BUILDS]]
    without = without_build if without_build in prior_builds else None
    band_builds = [r[0] for r in rows if r[0] != without][:PRIOR_BUILDS]
    used = [r for r in rows if r[0] in prior_builds or r[0] in band_builds]
    key = repr((BANDS_MODEL_VERSION, PRIOR_BUILDS, machine_class, upto.id, without, [m.name for m in metrics if m.noisy],
                [(b, n, str(run), cases, passed) for b, n, run, cases, passed in used]))
    return BandWindow(machine_class=machine_class, upto=upto.id, without=without, prior_builds=prior_builds,
                      band_builds=band_builds, inputs=hashlib.sha1(key.encode()).hexdigest())


class WindowPoints:
    """The points of every series of one machine class, read per build and kept for the windows that
    share the build (``window_noise_bands``): a sweep over a class's bases, newest first, reads each
    build once instead of 30 times (a window of 30 builds x 1,920 series: ~4 s of reading and folding
    at 1,000,000 results), and each point's within-run errors once (``Point.ses``). Points of one
    build are the same whichever builds they are read with (``history.points_from_rows`` folds each
    build's rows alone); the builds outside the latest window are let go."""

    def __init__(self, machine_class: str) -> None:
        self.machine_class = machine_class
        self.by_build: dict[int, dict[int, Point]] = {}

    def of(self, band_builds: list[int]) -> dict[int, list[Point]]:
        """``class_series_points(build_ids=band_builds)``: per series (ascending ids), its points
        oldest build first (``band_builds`` is newest first, as ``band_window`` orders it)."""
        wanted = set(band_builds)
        self.by_build = {b: points for b, points in self.by_build.items() if b in wanted}
        missing = [b for b in band_builds if b not in self.by_build]
        if missing:
            self.by_build.update({b: {} for b in missing})
            for series_id, points in class_series_points(build_ids=missing, machine_class=self.machine_class).items():
                for point in points:
                    self.by_build[point.build_id][series_id] = point
        oldest_first = [self.by_build[b] for b in reversed(band_builds)]
        series = sorted(set().union(*oldest_first)) if oldest_first else []
        return {s: [build[s] for build in oldest_first if s in build] for s in series}


def window_noise_bands(*, window: BandWindow, metrics, points: WindowPoints | None = None
                       ) -> tuple[dict[int, dict[str, float]], dict[str, float]]:
    """The noise bands (``points_noise_bands``) of every series of a machine class at once, from the window's builds
    (each series' points from ``band_builds``): one read of them instead of a whole history per
    series (/compare/ at 1,000,000 results read 1,934 histories: 111-140 s). Returns
    ``({series_id: bands}, the bands of a series without points)``.

    Run-to-run noise is what repeated runs of one build show (issue #42): a series with enough of
    them has its own; one without borrows the class's prior, pooled over the repeated runs of the
    class's alike cases (its other series, same metric), else the metric's default. The differences
    between builds are never taken for noise: on the quick start's cpu class (four releases, one run
    each) they are the releases' own changes (cold compile 27-74 %), which would grey every cell.
    ``points``: the class's points kept across windows (a sweep over many bases)."""
    points = (points.of(window.band_builds) if points is not None
              else class_series_points(build_ids=window.band_builds, machine_class=window.machine_class))
    priors = _repeat_priors(points, [m.name for m in metrics if m.noisy])
    return ({series_id: points_noise_bands(series_points, metrics=metrics, priors=priors) for series_id, series_points in points.items()},
            points_noise_bands([], metrics=metrics, priors=priors))


def _repeat_priors(points: dict[int, list[Point]], metrics: list[str]) -> dict[str, float]:
    """Per metric, the class prior (``class_prior``: the upper quartile over series) of what each
    series' repeated runs of one build show (one residual is enough); nan where fewer series have any."""
    out = {}
    for metric in metrics:
        estimates = [series_noise([], [p.run_values.get(metric) or [] for p in series]) for series in points.values()]
        out[metric] = class_prior(estimates, min_dof=1)
    return out


def points_noise_bands(points: list[Point], *, metrics, priors: dict[str, float]) -> dict[str, float]:
    """Per noisy metric, ``TWO_RUNS_95`` x the noise of these points' repeated runs of one build
    (``point_noise(repeats_only=True)``): the band of one series."""
    return {m.name: TWO_RUNS_95 * point_noise(points, m.name, prior=priors.get(m.name), repeats_only=True).sd
            for m in metrics if m.noisy}


def series_noise_get(*, series, metric: str) -> NoiseEstimate | None:
    """The noise model of ``metric`` on ``series`` over its whole stored history (None for a metric
    detection does not track). Steps detection alerted on are breaks, not noise."""
    from dashboard.regressions.history import series_points  # noqa: PLC0415
    from dashboard.regressions.models import Regression  # noqa: PLC0415

    if metric not in TRACKED_METRICS:
        return None
    points = series_points(series_id=series.id)
    starts = set(Regression.objects.filter(series=series, metric=metric, finding=Regression.Finding.CHANGE_POINT)
                 .exclude(status=Regression.Status.INVALID).values_list("first_bad_build_id", flat=True))
    breaks = [i for i, p in enumerate(points) if p.build_id in starts]
    prior = class_priors(machine_class=series.machine_class).get(metric)
    return point_noise(points, metric, prior=prior, breaks=breaks)
