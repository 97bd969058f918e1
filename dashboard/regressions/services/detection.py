"""Detection over one run: every series the run measured, each tracked metric, as of the run's build.

A series too noisy to track (its run-to-run sd past ``contract.findings.TOO_NOISY_SD``, or for its
speedup and compiled latency the median sd its runs' own speedup intervals stand for) raises no
change-point finding and no re-measurement: its changes are noise shown as results otherwise
(docs/noise-and-findings.md).

Idempotent: every finding is keyed by (series, metric, finding, first bad build), and the detector
is prefix-stable, so running it again on the same data creates nothing. Points triaged invalid are
left out of the series, so they never serve as a baseline again.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

from django.db import DatabaseError, transaction

from contract.findings import BLOCK_TIMED_METRICS, REASON_METRICS, too_noisy
from contract.metrics import BY_NAME, EXPLAINED_BY
from contract.reasons import FINDING_REASONS
from detection import (
    K_NOISE,
    PRIOR_MIN_RESIDUALS,
    ChangePoint,
    compare_cases,
    detect,
    dynamic_gap,
    early_check,
    noise_bar,
    young_change_passes,
)
from dashboard.regressions.explain import finding_cause
from dashboard.regressions.history import (
    ALARM_METRICS,
    Point,
    comparable_points,
    host_slowdown,
    machine_moved,
    series_points,
)
from dashboard.regressions.models import AlertSummary, Regression, Remeasurement
from dashboard.regressions.noise import class_priors, point_noise, stated_sd
from dashboard.regressions.two_build import RULE, SAME_CHANGE, alert_note, confirmed_by, two_build_changes
from dashboard.regressions.services.remeasure import (
    remeasurement_decide,
    remeasurement_decide_by_next_build,
    remeasurement_request,
)
from dashboard.results.host import HOST_REFERENCE_RUNS, HOST_SENSITIVE_METRICS, HOST_WORK_METRICS
from dashboard.results.models import Build, Result, Run, Series
from dashboard.results.same_build import same_build_ids
from dashboard.results.variants import base_of
from dashboard.results.selectors.builds import build_summary_get, build_summary_previous

DYNAMIC_GAP_THRESHOLD = 0.05
# A regression of a host-sensitive metric whose new builds ran on a slowed host (history.host_slowdown)
# is not alerted: both builds are re-measured, side by side on one host, and the re-runs decide.
_NOT_REGRESSIONS = {"fixed"}  # deterministic findings that are improvements
log = logging.getLogger(__name__)


@dataclass
class DetectionOutcome:
    run_id: str
    series_checked: int = 0
    created: list[int] = field(default_factory=list)  # Regression ids created by this pass
    remeasurements: list[int] = field(default_factory=list)  # Remeasurement ids requested
    series_failed: list[int] = field(default_factory=list)  # Series ids whose detection raised
    # What raised, per failed series: kept on the run's AlertSummary.detection_failures, so the
    # build's verdict says ``error`` / ``detection_failed`` naming them instead of a silent pass.
    failures: list[dict] = field(default_factory=list)
    done: bool = False  # the pass went over every series of the run (``detection_pass``)
    skipped: str = ""  # "running" (another copy holds the pass) or "done" (nothing new since it finished)
    pass_started: str = ""  # the pass this step worked on: a continuation names it

    def as_dict(self) -> dict:
        return {"run_id": self.run_id, "series_checked": self.series_checked,
                "created": self.created, "remeasurements": self.remeasurements, "series_failed": self.series_failed,
                "done": self.done, **({"skipped": self.skipped} if self.skipped else {})}


def detection_run(*, run_id) -> DetectionOutcome:
    """The whole detection of a run, now, as a fresh pass (``detection_pass.detection_step``, chunk
    after chunk, each committed): commands, tests and benchmarks. The worker's task runs it in
    bounded steps instead."""
    from dashboard.regressions.services.detection_pass import detection_step  # noqa: PLC0415 (it imports this module)

    return detection_step(run_id=run_id, budget_s=None, restart=True)


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


def _record(*, series, metric, finding, kind, first_bad, last_good, raised, summary, outcome, **fields) -> Regression | None:
    """Store a finding (once). Never one whose last good and first bad builds are one build stored
    twice (``results.same_build``: the quick start's local build and its imported sample)."""
    if same_build_ids(first_bad, last_good):
        return None
    if kind == Regression.Kind.REGRESSION and (cause := finding_cause(series_id=series.id, metric=metric, last_good_id=last_good,
                                                                      first_bad_id=first_bad)):
        fields["details"] = {**fields.get("details", {}), "cause": cause}  # docs/explain.md
    regression, created = Regression.objects.get_or_create(
        series=series, metric=metric, finding=finding, first_bad_build_id=first_bad,
        defaults={"kind": kind, "last_good_build_id": last_good, "raised_build_id": raised, "summary": summary, **fields},
    )
    if created:
        outcome.created.append(regression.id)
    return regression


def _noisy_findings(*, series: Series, points: list[Point], summary: AlertSummary, outcome: DetectionOutcome,
                    priors: dict[str, float]) -> None:
    stated = stated_sd(points)
    for metric, direction in ALARM_METRICS.items():  # a compile phase explains its total's findings instead
        if metric in BLOCK_TIMED_METRICS and too_noisy(stated):  # its runs say so themselves: not tracked
            continue
        # compile_cpu_ratio measured against another compile reference than the newest build's is
        # not part of its baseline: after a change of reference the series starts again (first week).
        scoped = comparable_points(points, metric)
        values = [p.values.get(metric) for p in scoped]
        if sum(v is not None for v in values) < 2:
            continue
        samples = [_pooled(p.samples.get(metric)) for p in scoped]
        found = detect(values, direction=direction, samples=samples if any(samples) else None) \
            if sum(v is not None for v in values) >= 3 else []
        # The two-build confirmation beside the engine (docs/detection.md): its alerts the engine has not
        # raised, and the newest build re-measured where it alone is off (its suspect).
        fast, fast_suspect = two_build_changes(scoped, metric, direction, found)
        # The floor rule where the change-point detector said nothing of the newest builds.
        if not any(cp.raised_at == len(points) - 1 or cp.first_bad >= len(points) - FLOOR_RULE_WINDOW for cp in found):
            _short_history(series=series, metric=metric, points=points, summary=summary, outcome=outcome,
                           prior=priors.get(metric))
        fast = [cp for cp in fast if not _stored_near(series, metric, points, cp.first_bad)]  # the floor rule's, say
        found = found + fast + ([fast_suspect] if fast_suspect is not None and not any(
            cp.state == "suspect" and cp.raised_at == fast_suspect.raised_at for cp in found) else [])
        rules = {id(cp): RULE for cp in fast + [fast_suspect] if cp is not None}
        for cp in found:
            if too_noisy(cp.noise):  # not tracked: no finding, no re-measurement (docs/noise-and-findings.md)
                continue
            if cp.kind == "regression" and _machine_moved(points, metric, cp.first_bad, cp.raised_at, cp.before, cp.after):
                continue  # eager latency moved as much beside it: the machine's change, which the speedup cancels
            host = host_slowed(points, cp, metric) if cp.kind == "regression" else None
            past_host = None
            if host is not None and not host_explains(metric, before=cp.before, after=cp.after, z=cp.z, host=host):
                past_host, host = host, None  # past anything the slower host explains: a regression as it stands
            if cp.state == "suspect" or host is not None:
                if cp.raised_at == len(points) - 1 and cp.kind == "regression" and cp.first_bad > 0:
                    request = remeasurement_request(series=series, metric=metric, points=points, suspect=cp, host=host,
                                                    extra={"rule": rules[id(cp)]} if id(cp) in rules else None)
                    if request is not None:
                        outcome.remeasurements.append(request.id)
                continue
            _record(
                series=series, metric=metric, finding=Regression.Finding.CHANGE_POINT, kind=cp.kind,
                first_bad=points[cp.first_bad].build_id,
                last_good=points[cp.last_good].build_id if cp.last_good is not None else None,
                raised=points[cp.raised_at].build_id, summary=summary, outcome=outcome,
                magnitude=cp.magnitude, confidence=cp.confidence, before_value=cp.before, after_value=cp.after,
                details={"message": _change_message(metric, cp) + (alert_note(cp) if id(cp) in rules else "")
                         + _past_host_note(past_host), "z": cp.z, "noise": cp.noise,
                         "delay": cp.delay, **({"host_slowed": past_host} if past_host else {}),
                         **({"rule": rules[id(cp)], "confirmed_by": confirmed_by(cp)} if id(cp) in rules else {}),
                         **_phase_details(points, metric, last_good=cp.last_good, first_bad=cp.first_bad, raised=cp.raised_at)},
            )


def _stored_near(series: Series, metric: str, points: list[Point], first_bad: int) -> bool:
    """Whether a change-point finding of the series' metric is stored with its first bad build within
    ``SAME_CHANGE`` builds of ``points[first_bad]`` (another rule's finding of one change)."""
    near = [p.build_id for p in points[max(first_bad - SAME_CHANGE, 0) : first_bad + SAME_CHANGE + 1]]
    return Regression.objects.filter(series=series, metric=metric, finding=Regression.Finding.CHANGE_POINT,
                                     first_bad_build_id__in=near).exclude(first_bad_build_id=points[first_bad].build_id).exists()


FLOOR_RULE_BAD_BUILDS = 2  # the newest builds a change of the floor rule may span before it is regressed
FLOOR_RULE_WINDOW = 10  # builds: the floor rule's baseline, and how far back a detector finding covers it


def _short_history(*, series, metric: str, points: list[Point], summary, outcome, prior: float | None) -> None:
    """The floor rule (``early_check``) on any history: in a series' first week it is the only check
    (fewer builds than the change-point detector needs); later a backstop for a change past the
    floor and k x the run-to-run noise model that the detector's own noise estimate misses (a
    compile time whose history is bimodal, say). Two bad builds in a row are a regression; one is a
    suspect, re-measured where a worker can, decided by the next build where none can
    (``remeasurement_decide_by_next_build``)."""
    values = [p.values.get(metric) for p in comparable_points(points, metric)]  # the baseline: one compile reference
    # The noise known before a change of 1-2 builds (across a change of compile reference: each side's own).
    noise = point_noise(points[:-FLOOR_RULE_BAD_BUILDS], metric, prior=prior)
    if too_noisy(noise.sd):  # a series too noisy to track raises nothing (docs/noise-and-findings.md)
        return
    found = early_check(values, direction=ALARM_METRICS[metric], sd=noise.sd, floor=BY_NAME[metric].floor, min_before=None,
                        k=noise_bar(noise))  # 3 sd, or a Student-t bar for a noise estimated from few runs
    if found is None:
        return
    # A young series (one or two builds before the change) borrows the class's noise: only a change far
    # outside it is regressed; else it stays a suspect (detection.young_change_passes, docs/detection.md).
    earlier = sum(v is not None for v in values[: found.first_bad])
    young = not young_change_passes(found.before, found.after, earlier=earlier, sd=noise.sd, measured=noise.source == "series",
                                    min_factor=BY_NAME[metric].young_factor)
    cp = ChangePoint(first_bad=found.first_bad, last_good=found.last_good, raised_at=len(points) - 1, kind="regression",
                     relative_change=found.relative_change, magnitude=found.magnitude, before=found.before,
                     after=found.after, z=found.z, confidence=0.0, state="suspect", noise=noise.sd)
    if _machine_moved(points, metric, found.first_bad, len(points) - 1, found.before, found.after):
        return  # eager latency moved as much beside it: the machine's change, which the speedup cancels
    host = host_slowed(points, cp, metric)
    past_host = None
    if host is not None and not host_explains(metric, before=found.before, after=found.after, z=found.z, host=host):
        past_host, host = host, None  # past anything the slower host explains: a regression as it stands
    if found.state == "suspect" or host is not None or young:  # a host-bound drop on a slowed host: re-measured
        request = remeasurement_request(series=series, metric=metric, points=points, suspect=cp, host=host,
                                        extra={"rule": "short_history", "floor": BY_NAME[metric].floor, "noise_source": noise.source,
                                               **({"young": earlier} if young else {})})
        if request is not None:
            outcome.remeasurements.append(request.id)
        return
    _record(
        series=series, metric=metric, finding=Regression.Finding.CHANGE_POINT, kind=Regression.Kind.REGRESSION,
        first_bad=points[found.first_bad].build_id, last_good=points[found.last_good].build_id,
        raised=points[-1].build_id, summary=summary, outcome=outcome, magnitude=found.magnitude, confidence=None,
        before_value=found.before, after_value=found.after,
        details={"message": f"{metric} {found.before:.4g} -> {found.after:.4g} ({found.relative_change:+.1%}) on "
                 f"{found.bad_builds} builds in a row, past the {BY_NAME[metric].floor:.0%} floor and {abs(found.z):.1f} x the "
                 f"run-to-run noise ({noise.sd:.2%}, {noise.source}); short history" + _past_host_note(past_host),
                 "rule": "short_history", "z": found.z, "noise": noise.sd, "noise_source": noise.source,
                 "delay": found.bad_builds, **({"host_slowed": past_host} if past_host else {}),
                 **_phase_details(points, metric, last_good=found.last_good, first_bad=found.first_bad, raised=len(points) - 1)},
    )


def _machine_moved(points: list[Point], metric: str, first_bad: int, raised: int, before: float, after: float) -> bool:
    """``history.machine_moved`` over the up to ``FLOOR_RULE_WINDOW`` points before the change and its bad ones."""
    return machine_moved(metric, points[max(first_bad - FLOOR_RULE_WINDOW, 0) : first_bad], points[first_bad : raised + 1],
                         old=before, new=after) is not None


def _phase_details(points: list[Point], metric: str, *, last_good: int | None, first_bad: int, raised: int) -> dict:
    """``{"phases": [...]}`` of a total's finding (contract.metrics.EXPLAINED_BY: a compile's phases):
    each phase at the last good build and over the bad builds (median), largest change in seconds
    first, so the finding says where its time went; {} for a metric without phases or none measured."""
    if last_good is None or metric not in EXPLAINED_BY:
        return {}
    bad = points[first_bad : raised + 1]
    phases = []
    for phase in EXPLAINED_BY[metric]:
        before = points[last_good].values.get(phase)
        after = [p.values[phase] for p in bad if p.values.get(phase) is not None]
        if before is not None and after:
            after_value = sorted(after)[len(after) // 2]
            phases.append({"metric": phase, "label": BY_NAME[phase].line_label, "before": before, "after": after_value,
                           "change_s": after_value - before})
    phases.sort(key=lambda p: -abs(p["change_s"]))
    return {"phases": phases} if phases else {}


def host_explains(metric: str, *, before: float, after: float, z: float, host: dict) -> bool:
    """Whether a slower host could explain a change: always for a host-sensitive metric of a
    host-bound case (no model of how the host moves it); for host work (compile time, which scales
    with the host's speed) only where the change less the slowdown is under the metric's floor or
    ``K_NOISE`` x the noise. The slowdown is measured beside the compile, so a build whose compile
    works the host harder (coordinate-descent tuning: +127 % compile time, the probe 1.45x slower)
    would otherwise hold back its own regression."""
    if metric not in HOST_WORK_METRICS or not before or not after or not z:
        return True
    raw = math.log(after / before)
    adjusted = raw - math.log(max(host["slowdown"], 1.0))
    if raw <= 0 or adjusted <= 0:
        return True
    return adjusted < math.log1p(BY_NAME[metric].floor) or abs(z) * adjusted / raw < K_NOISE


def _past_host_note(host: dict | None) -> str:
    return f"; the host was {host['slowdown']:.2f}x slower, which explains less than this" if host else ""


def host_slowed(points: list[Point], cp, metric: str) -> dict | None:
    """``host_slowdown`` of the change's new builds against the points before it, for a metric that
    follows the host (``HOST_SENSITIVE_METRICS`` in host-bound cases, ``HOST_WORK_METRICS`` in all)."""
    if metric not in HOST_SENSITIVE_METRICS and metric not in HOST_WORK_METRICS:
        return None
    return host_slowdown(points[: cp.first_bad][-HOST_REFERENCE_RUNS:], points[cp.first_bad : cp.raised_at + 1],
                         host_work=metric in HOST_WORK_METRICS)


def _pooled(runs: list[list[float]] | None) -> list[float] | None:
    return [x for run in runs for x in run] if runs else None


def _change_message(metric: str, cp) -> str:
    return (f"{metric} {cp.before:.4g} -> {cp.after:.4g} ({cp.relative_change:+.1%}), "
            f"{abs(cp.z):.1f} noise standard errors")


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


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _jsonable(details: dict) -> dict:
    return {k: v for k, v in details.items() if isinstance(v, (str, int, float, bool, list, type(None)))}


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
