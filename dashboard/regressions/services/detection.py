"""Detection over one run: every series the run measured, each tracked metric, as of the run's build.

A series too noisy to track (its run-to-run sd past ``contract.findings.TOO_NOISY_SD``, or for its
speedup and compiled latency the median sd its runs' own speedup intervals stand for) raises no
change-point finding and no re-measurement: its changes are noise shown as results otherwise
(docs/noise-and-findings.md).

Idempotent: every finding is keyed by (series, metric, finding, first bad build), and the detector
is prefix-stable, so running it again on the same data creates nothing. Points triaged invalid are
left out of the series, so they never serve as a baseline again."""
from __future__ import annotations

import logging

from django.db import DatabaseError, transaction

from contract.findings import REASON_METRICS, too_noisy
from contract.reasons import FINDING_REASONS
from detection import (
    PRIOR_MIN_RESIDUALS,
    compare_cases,
    dynamic_gap,
)
from dashboard.regressions.history import (
    ALARM_METRICS,
    Point,
    series_points,
)
from dashboard.regressions.models import AlertSummary, Regression, Remeasurement
from dashboard.regressions.noise import class_priors, stated_sd
from dashboard.regressions.services.remeasure import (
    remeasurement_decide,
    remeasurement_decide_by_next_build,
)
from dashboard.results.models import Build, Result, Run, Series
from dashboard.results.variants import base_of
from dashboard.results.selectors.builds import build_summary_get, build_summary_previous
from dashboard.regressions.services.detection_noisy import FLOOR_RULE_BAD_BUILDS, _noisy_findings
from dashboard.regressions.services.detection_record import DetectionOutcome, _jsonable, _number, _record


DYNAMIC_GAP_THRESHOLD = 0.05
# A regression of a host-sensitive metric whose new builds ran on a slowed host (history.host_slowdown)
# is not alerted: both builds are re-measured, side by side on one host, and the re-runs decide.
_NOT_REGRESSIONS = {"fixed"}  # deterministic findings that are improvements
log = logging.getLogger(__name__)


def detection_priors(*, run: Run):
    """The noise known before a change of the newest 1-2 builds (the floor rule's window): a change
    must not widen the prior it is judged by (4 earlier builds, then +94 % compile time in three
    workloads at once: a prior learned with the bad build in it was 28 %, and it passed as noise)."""
    return class_priors(machine_class=run.machine.machine_class, upto=run.build, skip_newest=FLOOR_RULE_BAD_BUILDS,
                        min_residuals=PRIOR_MIN_RESIDUALS, short=True)


def detection_chunk(*, run: Run, series_list: list[Series], priors, outcome: DetectionOutcome, first: bool,
                    last: bool) -> None:
    """Detection over ``series_list`` (some of the run's series, in id order), inside the caller's
    transaction. ``first``: the pass's first chunk, whose failures replace the summary's (a clean
    pass clears them); a later chunk's add to them. A variant's run is judged once, against its base
    build, on the first chunk; the last chunk of a base's run judges again the variants measured
    before it (issue #42: variant verdicts are findings like any other)."""
    machine_class = run.machine.machine_class
    summary, _ = AlertSummary.objects.get_or_create(
        run=run,
        defaults={"build": run.build, "machine_class": machine_class,
                  "previous_build": previous_build(build=run.build, machine_class=machine_class)},
    )
    cache: dict[int, list[Point] | None] = {}  # one read of each series' history per chunk
    if run.reason not in FINDING_REASONS:  # a re-measurement decides its suspects; a bisection run nothing
        _decide_only(run=run, series_list=series_list, summary=summary, priors=priors, cache=cache)
        return
    if run.build.overrides:  # a variant is no point of its base's series: judged against its base build
        if first:
            _variant_findings(build=run.build, machine_class=machine_class, summary=summary, outcome=outcome)
        return
    failed_before = len(outcome.failures)
    for series in series_list:
        points = _points_upto(series=series, build_id=run.build_id, cache=cache)
        if points is None:
            continue
        outcome.series_checked += 1
        _series_detect(series=series, points=points, run=run, summary=summary, outcome=outcome, priors=priors)
    _dynamic_gap_findings(series_list=series_list, build_id=run.build_id, summary=summary, outcome=outcome, cache=cache)
    if last:
        for variant, variant_summary in _detected_variants(build=run.build, machine_class=machine_class):
            _variant_findings(build=variant, machine_class=machine_class, summary=variant_summary, outcome=outcome)
    failures = outcome.failures[failed_before:] if first else summary.detection_failures + outcome.failures[failed_before:]
    if summary.detection_failures != failures:
        summary.detection_failures = failures
        summary.save(update_fields=["detection_failures"])


def _detected_variants(*, build: Build, machine_class: str) -> list[tuple[Build, AlertSummary]]:
    """The variants of ``build`` already detected on the class, with their summaries: measured before
    their base, they are judged again once it is (``_variant_findings`` stores each finding once)."""
    summaries = AlertSummary.objects.filter(build__git_sha=build.git_sha, machine_class=machine_class).exclude(
        build__overrides={}).select_related("build").order_by("id")
    return [(s.build, s) for s in summaries if base_of(s.build) == build]


def _variant_findings(*, build: Build, machine_class: str, summary: AlertSummary, outcome: DetectionOutcome) -> None:
    """A variant build's findings (issue #42): its cases against its base build's, case by case with
    the run-to-run noise model (``verdict.verdict_against_noted``, the named-baseline comparison its
    verdict always made), stored as findings like any other (first bad: the variant, last good: its
    base), so the verdict, /regressions/ and /ab/ show one set of numbers with an id. Its suspects
    (a slowed host, a young series) stay the verdict's. Nothing without a base measured on the class."""
    from dashboard.regressions.verdict import verdict_against_noted  # noqa: PLC0415 (the verdict's comparison)

    base = base_of(build)
    if base is None or not Result.objects.filter(build=base, run__machine__machine_class=machine_class).exists():
        return
    found, _ = verdict_against_noted(build=build, baseline=base, machine_class=machine_class, with_series=True)
    series = {s.id: s for s in Series.objects.filter(pk__in={f["series_id"] for f in found})}
    for f in found:
        if f["kind"] != "regression":
            continue
        metric = f["metric"] if f["finding"] == Regression.Finding.CHANGE_POINT else REASON_METRICS.get(f["finding"], "status")
        _record(series=series[f["series_id"]], metric=metric, finding=f["finding"], kind=Regression.Kind.REGRESSION,
                first_bad=build.id, last_good=base.id, raised=build.id, summary=summary, outcome=outcome,
                magnitude=f["magnitude"], confidence=f.get("confidence") if f["finding"] == Regression.Finding.CHANGE_POINT else None,
                before_value=_number(f.get("before")), after_value=_number(f.get("after")),
                details={"message": f["message"], "reasons": list(f.get("reasons") or []), "noise": f.get("noise"),
                         "rule": "variant", "variant_of": base.id,
                         **({"before": f["before"], "after": f["after"]} if metric == "status" else {})})


def _decide_only(*, run: Run, series_list: list[Series], summary: AlertSummary, priors, cache: dict) -> None:
    """A re-measurement run: its results join its build's point, and the pending re-measurements of
    its series are decided on them; no finding of its own. A bisection run: nothing."""
    if run.reason != Run.Reason.REMEASUREMENT:
        return
    for series in series_list:
        points = _points_upto(series=series, build_id=run.build_id, cache=cache)
        if points is not None:
            _decide_pending(series=series, points=points, summary=summary, priors=priors)


def _series_detect(*, series: Series, points: list[Point], run: Run, summary: AlertSummary, outcome: DetectionOutcome,
                   priors) -> None:
    """One series' findings, in a savepoint: a series whose data the detector cannot handle is
    logged, recorded (``outcome.failures``, then the run's summary) and skipped, never the end of the
    others' detection. A database error still ends the pass (the task is retried)."""
    try:
        with transaction.atomic():
            _noisy_findings(series=series, points=points, summary=summary, outcome=outcome, priors=priors)
            _deterministic_findings(series=series, points=points, summary=summary, outcome=outcome)
            _decide_pending(series=series, points=points, summary=summary, priors=priors)
    except DatabaseError:
        raise
    except Exception as error:  # noqa: BLE001 (any fault of one series' data)
        log.exception("detection of series %s (run %s) failed; skipped", series.id, run.id)
        outcome.series_failed.append(series.id)
        outcome.failures.append({"series": series.id, "workload": series.workload.name, "config": str(series.config),
                                 "error": f"{type(error).__name__}: {error}"[:500]})


def previous_build(*, build: Build, machine_class: str) -> Build | None:
    """The build measured on the machine class just before ``build`` (the overview's summary
    table answers it from its index; joining builds to every result did not scale)."""
    summary = build_summary_get(build_id=build.id, machine_class=machine_class)
    if summary is None:
        return None
    previous = build_summary_previous(summary=summary)
    return previous.build if previous else None


def _points_upto(*, series: Series, build_id: int, cache: dict) -> list[Point] | None:
    if series.id not in cache:
        cache[series.id] = _read_points(series=series)
    points = cache[series.id]
    index = next((i for i, p in enumerate(points) if p.build_id == build_id), None)
    return None if index is None else points[: index + 1]


def _read_points(*, series: Series) -> list[Point]:
    excluded = set(
        Regression.objects.filter(series=series, status=Regression.Status.INVALID, finding=Regression.Finding.CHANGE_POINT)
        .values_list("metric", "first_bad_build_id")
    )
    return series_points(series_id=series.id, excluded=excluded)


def _deterministic_findings(*, series, points: list[Point], summary, outcome) -> None:
    current = points[-1]
    if len(points) < 2:
        return  # a series' first build is its baseline: its failures are baseline state, not regressions
    previous = points[-2]
    for finding in compare_cases(previous.case if previous else None, current.case):
        if finding.kind == Regression.Finding.STATUS_CHANGED and not finding.regression:
            continue  # an already-failing case now failing for the machine (detection.MACHINE_FAILURES): no finding
        _record(
            series=series, metric=REASON_METRICS.get(finding.kind, "status"), finding=finding.kind,
            kind=Regression.Kind.IMPROVEMENT if finding.kind in _NOT_REGRESSIONS or not finding.regression
            else Regression.Kind.REGRESSION,
            first_bad=current.build_id, last_good=previous.build_id if previous else None,
            raised=current.build_id, summary=summary, outcome=outcome,
            before_value=_number(finding.details.get("before")), after_value=_number(finding.details.get("after")),
            details={"message": finding.message, "reasons": list(finding.reasons), **_jsonable(finding.details)},
        )


def _dynamic_gap_findings(*, series_list: list[Series], build_id: int, summary, outcome, cache: dict) -> None:
    """For each unbacked series of the run, the gap to its backed twin over builds up to this one."""
    for unbacked in series_list:
        case = unbacked.config.case_config
        if case.shape_regime != "unbacked":
            continue
        backed = Series.objects.filter(
            workload=unbacked.workload, machine_class=unbacked.machine_class, config__key=case.replace(shape_regime="backed").key,
        ).first()
        if backed is None:
            continue
        u_points = {p.build_id: p for p in (_points_upto(series=unbacked, build_id=build_id, cache=cache) or [])}
        b_points = {p.build_id: p for p in (_points_upto(series=backed, build_id=build_id, cache=cache) or [])}
        builds = [b for b in u_points if b in b_points]  # both in build order (dicts keep it)
        if len(builds) < 2 or builds[-1] != build_id:
            continue  # the first build with both is the baseline
        compared = [points[b] for points in (b_points, u_points) for b in builds[-2:]]
        if any(too_noisy(stated_sd([p])) for p in compared):  # a side's runs too noisy to track (/dynamic/ says so)
            continue
        found = dynamic_gap([b_points[b].values.get("speedup") for b in builds],
                            [u_points[b].values.get("speedup") for b in builds], threshold=DYNAMIC_GAP_THRESHOLD)
        for finding in found:
            _record(
                series=unbacked, metric="dynamic_gap", finding=Regression.Finding.DYNAMIC_GAP,
                kind=Regression.Kind.REGRESSION, first_bad=build_id,
                last_good=builds[-2] if len(builds) >= 2 else None, raised=build_id, summary=summary,
                outcome=outcome, magnitude=finding.details.get("gap"),
                before_value=_number(finding.details.get("previous_gap")), after_value=_number(finding.details.get("gap")),
                details={"message": finding.message, "reasons": [], **_jsonable(finding.details)},
            )


def _decide_pending(*, series: Series, points: list[Point], summary: AlertSummary, priors: dict[str, float]) -> None:
    for request in Remeasurement.objects.filter(series=series, status=Remeasurement.Status.PENDING,
                                                metric__in=ALARM_METRICS).order_by("id"):
        if remeasurement_decide(remeasurement_id=request.id).status == Remeasurement.Status.PENDING:
            remeasurement_decide_by_next_build(remeasurement_id=request.id, points=points, summary=summary,
                                               prior=priors.get(request.metric))
