"""The rules for a tracked (noisy) metric of one series: a change point against the series' noise, the
short-history rule past the metric's floor, each held back where a slowed host or a moved machine
explains it, and a compile total's phases named."""
from __future__ import annotations

import math


from contract.findings import BLOCK_TIMED_METRICS, too_noisy
from contract.metrics import BY_NAME
from detection import (
    K_NOISE,
    ChangePoint,
    detect,
    early_check,
    noise_bar,
    young_change_passes,
)
from dashboard.regressions.history import (
    ALARM_METRICS,
    Point,
    comparable_points,
    host_slowdown,
    machine_moved,
)
from dashboard.regressions.finding_explanation import phase_details
from dashboard.regressions.models import AlertSummary, Regression
from dashboard.regressions.noise import point_noise, stated_sd
from dashboard.regressions.two_build import RULE, SAME_CHANGE, alert_note, confirmed_by, two_build_changes
from dashboard.regressions import engine_gate
from dashboard.regressions.services.remeasure import (
    remeasurement_request,
)
from dashboard.results.host import HOST_REFERENCE_RUNS, HOST_SENSITIVE_METRICS, HOST_WORK_METRICS
from dashboard.results.models import Series
from dashboard.regressions.services.detection_record import DetectionOutcome, _record


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
        # The engine's alerts held until their newest build is run again (engine_gate): those confirmed
        # stand (and the rule's alerts of the same change yield to them), the others wait or are dropped.
        gates = {id(cp): engine_gate.gate(scoped, metric, direction, cp) for cp in found if cp.state == "alert"}
        standing = [cp for cp in found if cp.state != "alert" or gates[id(cp)][0] == engine_gate.CONFIRMED]
        # The two-build confirmation beside the engine (docs/detection.md): its alerts the engine has not
        # raised, and the newest build re-measured where it alone is off (its suspect).
        fast, fast_suspect = two_build_changes(scoped, metric, direction, standing)
        # The floor rule where the change-point detector said nothing of the newest builds.
        if not any(cp.raised_at == len(points) - 1 or cp.first_bad >= len(points) - FLOOR_RULE_WINDOW for cp in found):
            _short_history(series=series, metric=metric, points=points, summary=summary, outcome=outcome,
                           prior=priors.get(metric))
        fast = [cp for cp in fast if not _stored_near(series, metric, points, cp.first_bad)]  # the floor rule's, say
        found = found + fast + ([fast_suspect] if fast_suspect is not None and not any(
            cp.state == "suspect" and cp.raised_at == fast_suspect.raised_at for cp in found) else [])
        rules = {id(cp): RULE for cp in fast + [fast_suspect] if cp is not None}
        gated: dict[int, str | None] = {}  # id of an engine alert confirmed by its newest build's re-run: how
        for cp in found:
            state, how = gates.get(id(cp), (None, None))  # the engine's alerts: held until their newest build runs again
            if state == engine_gate.REJECTED or (state == engine_gate.CONFIRMED and how is not None
                                                 and _stored_near(series, metric, points, cp.first_bad)):
                continue  # dropped, or confirmed after another rule's finding of it was stored
            if state == engine_gate.PENDING:
                rules[id(cp)] = engine_gate.RULE
            elif state == engine_gate.CONFIRMED:
                gated[id(cp)] = how
            if too_noisy(cp.noise):  # not tracked: no finding, no re-measurement (docs/noise-and-findings.md)
                continue
            if cp.kind == "regression" and _machine_moved(points, metric, cp.first_bad, cp.raised_at, cp.before, cp.after):
                continue  # eager latency moved as much beside it: the machine's change, which the speedup cancels
            host = host_slowed(points, cp, metric) if cp.kind == "regression" else None
            past_host = None
            if host is not None and not host_explains(metric, before=cp.before, after=cp.after, z=cp.z, host=host):
                past_host, host = host, None  # past anything the slower host explains: a regression as it stands
            if cp.state == "suspect" or host is not None or state == engine_gate.PENDING:
                if cp.raised_at == len(points) - 1 and cp.kind == "regression" and cp.first_bad > 0:
                    request = remeasurement_request(series=series, metric=metric, points=points, suspect=cp, host=host,
                                                    # held back for a slowed host: re-runs of both builds decide, as before
                                                    extra=_request_extra(None if host and state else rules.get(id(cp)), points, cp))
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
                         + engine_gate.gate_note(gated.get(id(cp))) + _past_host_note(past_host), "z": cp.z, "noise": cp.noise,
                         "delay": cp.delay, **({"host_slowed": past_host} if past_host else {}),
                         **({"rule": rules[id(cp)], "confirmed_by": confirmed_by(cp)} if id(cp) in rules else {}),
                         **({"rule": engine_gate.RULE, "confirmed_by": gated[id(cp)]} if gated.get(id(cp)) else {}),
                         **phase_details(points, metric, last_good=cp.last_good, first_bad=cp.first_bad, raised=cp.raised_at)},
            )


def _request_extra(rule: str | None, points: list[Point], cp) -> dict | None:
    """What a re-measurement keeps of the rule that asked for it (the engine gate: the change's builds)."""
    if rule != engine_gate.RULE:
        return {"rule": rule} if rule else None
    return {"rule": rule, "first_bad_build_id": points[cp.first_bad].build_id,
            "last_good_build_id": points[cp.last_good].build_id if cp.last_good is not None else None}


FLOOR_RULE_BAD_BUILDS = 2  # the newest builds a change of the floor rule may span before it is regressed
FLOOR_RULE_WINDOW = 10  # builds: the floor rule's baseline, and how far back a detector finding covers it


def _stored_near(series: Series, metric: str, points: list[Point], first_bad: int) -> bool:
    """Whether a change-point finding of the series' metric is stored with its first bad build within
    ``SAME_CHANGE`` builds of ``points[first_bad]`` (another rule's finding of one change)."""
    near = [p.build_id for p in points[max(first_bad - SAME_CHANGE, 0) : first_bad + SAME_CHANGE + 1]]
    return Regression.objects.filter(series=series, metric=metric, finding=Regression.Finding.CHANGE_POINT,
                                     first_bad_build_id__in=near).exclude(first_bad_build_id=points[first_bad].build_id).exists()


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
                 **phase_details(points, metric, last_good=found.last_good, first_bad=found.first_bad, raised=len(points) - 1)},
    )


def _machine_moved(points: list[Point], metric: str, first_bad: int, raised: int, before: float, after: float) -> bool:
    """``history.machine_moved`` over the up to ``FLOOR_RULE_WINDOW`` points before the change and its bad ones."""
    return machine_moved(metric, points[max(first_bad - FLOOR_RULE_WINDOW, 0) : first_bad], points[first_bad : raised + 1],
                         old=before, new=after) is not None


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
