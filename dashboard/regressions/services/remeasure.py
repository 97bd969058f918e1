"""Confirmation by re-measurement (issue #6): a suspect on the newest build is re-run on that build
and the build before; the decision is taken on the combined runs of both builds.

``remeasurement_request`` records the request and hands it to ``remeasurement_dispatch`` once the
transaction commits; ``remeasurement_decide`` runs after each detection pass on the series and
decides as soon as both builds have at least two runs. A re-measurement that no worker can run (no
worker of the class has both builds, e.g. documents posted from outside) never waits forever:
``remeasurement_decide_by_next_build`` decides it on the next build of the series (a second bad
build confirms it, a good one rejects it).
"""
from __future__ import annotations

import logging
import math
import statistics

from django.db import transaction
from django.utils import timezone

from dashboard.durable import send_after_commit
from dashboard.dispatch.models import BuildEnvironment
from dashboard.dispatch.services import run_request
from dashboard.results.models import Result
from dashboard.results.same_build import same_build_ids
from contract.metrics import BY_NAME
from detection import FastConfig, confirm_with_remeasurement, is_worse, noise_bar, young_change_passes
from dashboard.regressions.history import TRACKED_METRICS, Point, comparable_points, host_slowdown, series_points
from dashboard.regressions.models import Regression, Remeasurement
from dashboard.regressions.two_build import RULE as TWO_BUILD, alert_note, build_runs, confirmed_by, two_build_decision
from dashboard.regressions import engine_gate
from dashboard.regressions.finding_explanation import finding_explanation
from dashboard.results.host import HOST_REFERENCE_RUNS, HOST_SENSITIVE_METRICS, HOST_WORK_METRICS

log = logging.getLogger(__name__)
MIN_RUNS = 2  # per build: the original run and at least one re-run


def remeasurement_request(*, series, metric: str, points: list[Point], suspect, host: dict | None = None,
                          extra: dict | None = None) -> Remeasurement | None:
    """Re-measure the newest build against the last good one. ``host``: set when the change is held
    back because the host was slowed (``detection_noisy.host_slowed``); kept with the suspect for the page.
    ``extra``: kept with the suspect too (the short-history rule's floor and noise source)."""
    if suspect.last_good is None or same_build_ids(points[-1].build_id, points[suspect.last_good].build_id):
        return None  # nothing to re-measure against: no last good build, or it is this build stored twice
    reference = points[-1].reference(metric)  # compile_cpu_ratio: the compile reference it was measured against
    request, created = Remeasurement.objects.get_or_create(
        series=series, metric=metric, build_id=points[-1].build_id,
        defaults={"baseline_build_id": points[suspect.last_good].build_id,
                  "suspect": {**suspect.to_dict(), **({"host_slowed": host} if host else {}), **(extra or {}),
                              **({"compile_reference": reference} if reference is not None else {})}},
    )
    if created:
        send_after_commit(lambda: remeasurement_dispatch(remeasurement_id=request.id), what=f"re-measurement {request.id}")
    return request


def remeasurement_dispatch(*, remeasurement_id: int) -> list[str]:
    """Queue the re-runs: one run of the suspect case on each of the two builds (a suspect of the
    two-build rule: ``FastConfig.reruns`` runs of the suspect build, which its rule decides on), on the runner
    workers of the series' machine class (``dashboard.dispatch``). Only where a worker of the class
    has reported both builds; otherwise the request waits on /regressions/ and is decided as soon as
    re-runs of both builds are ingested by any means (CLI, API). Returns the requested run ids."""
    request = Remeasurement.objects.select_related("series__workload", "series__config").get(pk=remeasurement_id)
    series, case = request.series, request.series.config.case_config
    builds = [request.build, request.baseline_build]
    if (request.suspect or {}).get("rule") == TWO_BUILD:  # its rule decides on the suspect build's own runs alone
        builds = [request.build] * FastConfig().reruns
    if not remeasurement_runnable(request):
        log.info("re-measurement %s: no worker of %s has both builds; re-runs or the next build decide it",
                 remeasurement_id, series.machine_class)
        return []
    run_ids = []
    for build in builds:
        size = (Result.objects.filter(series=series, build=build).order_by("-id").values_list("run__size", flat=True).first()
                 or "full")
        run = run_request(build=build, machine_class=series.machine_class, size=size, requested_by="re-measurement",
                          reason="remeasurement", workloads=[series.workload.name], modes=[case.compile_mode], regimes=[case.shape_regime],
                          dtypes=[case.dtype], notes=f"re-measurement {request.id} of {request.metric}")
        run_ids.append(str(run.id))
    return run_ids


def _locked(remeasurement_id: int) -> Remeasurement:
    """The re-measurement, its row locked until the transaction ends, and only its row (``of``): a
    lock through the join on its series blocked every ingest inserting results of that series (a
    foreign key takes a share lock on it), and ingest and detection deadlocked (#33 item 3)."""
    return Remeasurement.objects.select_for_update(of=("self",)).select_related("series").get(pk=remeasurement_id)


def remeasurement_runnable(request: Remeasurement) -> bool:
    """Whether a runner worker of the series' machine class has reported both builds."""
    available = set(BuildEnvironment.objects.filter(
        machine_class=request.series.machine_class, build_id__in=[request.build_id, request.baseline_build_id],
    ).values_list("build_id", flat=True))
    return available == {request.build_id, request.baseline_build_id}


def remeasurement_decide_by_next_build(*, remeasurement_id: int, points: list[Point], summary, prior: float | None = None,
                                       before: int = 8) -> Remeasurement:
    """Decide a pending re-measurement that no worker can run on the series' next build (``points``
    in build order, up to the newest): worse than the median of the ``before`` builds up to the
    baseline by ``noise_bar`` (``K_NOISE``, or a Student-t bar for a noise from few runs) x the
    run-to-run noise (and the suspect's floor, if it had one) confirms
    it as a regression first bad at the suspect build, raised at the next one; otherwise it is
    rejected. Nothing happens before a next build with a value exists, where a worker can run it, or
    while the next build of a host-sensitive metric ran on a slowed host too."""
    from dashboard.regressions.noise import point_noise  # noqa: PLC0415 (reads; avoids an import cycle)

    with transaction.atomic():
        request = _locked(remeasurement_id)
        if request.status != Remeasurement.Status.PENDING or remeasurement_runnable(request):
            return request
        ids = [p.build_id for p in points]
        if request.build_id not in ids or request.baseline_build_id not in ids:
            return request
        if (request.suspect or {}).get("rule") == TWO_BUILD:
            return _two_build_decide(request, points, summary=summary, decided_by="next_build")
        if (request.suspect or {}).get("rule") == engine_gate.RULE:
            return _gate_decide(request, points, summary=summary)
        metric, direction = request.metric, TRACKED_METRICS[request.metric]
        later = [p for p in points[ids.index(request.build_id) + 1:] if p.values.get(metric)]
        if not later:
            return request
        nxt = later[0]
        reference = points[ids.index(request.build_id)].reference(metric)
        if nxt.reference(metric) != reference:  # compile_cpu_ratio against another reference: it cannot tell
            return _undecided_reference_changed(request, build_id=nxt.build_id, reference=reference,
                                                other=nxt.reference(metric))
        history = [p for p in comparable_points(points[: ids.index(request.baseline_build_id) + 1], metric, reference=reference)
                   if p.values.get(metric)][-before:]
        if not history:
            return request
        host_work = metric in HOST_WORK_METRICS
        if (metric in HOST_SENSITIVE_METRICS or host_work) and \
                host_slowdown(history[-HOST_REFERENCE_RUNS:], [nxt], host_work=host_work) is not None:
            return request  # the next build ran on a slowed host too: it cannot tell; re-runs on one host can
        baseline = statistics.median(p.values[metric] for p in history)
        noise = point_noise(points[: ids.index(request.baseline_build_id) + 1], metric, prior=prior)
        sd = max(noise.sd, request.suspect.get("noise") or 0.0)
        floor = request.suspect.get("floor") or 0.0
        value = nxt.values[metric]
        k = noise_bar(noise)  # K_NOISE, or a Student-t bar for a noise the series estimated from few runs
        bad = is_worse(value, baseline, direction=direction, sd=sd, floor=floor, k=k)
        # A young series (one or two builds up to the baseline): a second bad build is no repeated run;
        # only a change far outside the class's noise is confirmed (detection.young_change_passes).
        earlier = sum(1 for p in comparable_points(points[: ids.index(request.baseline_build_id) + 1], metric, reference=reference)
                      if p.values.get(metric))
        young = bad and not young_change_passes(baseline, value, earlier=earlier, sd=sd, measured=noise.source == "series",
                                                min_factor=BY_NAME[metric].young_factor)
        rel = value / baseline - 1.0
        request.decision = {"decided_by": "next_build", "next_build_id": nxt.build_id, "before": baseline,
                            "after": value, "relative_change": rel, "noise": sd, "noise_source": noise.source,
                            "k": k, "floor": floor,
                            "decision": "young_series" if young else "regression" if bad else "no_change"}
        request.decided_at = timezone.now()
        bad = bad and not young
        request.status = (Remeasurement.Status.INCONCLUSIVE if young else
                          Remeasurement.Status.CONFIRMED if bad else Remeasurement.Status.REJECTED)
        if bad:
            suspect = request.suspect
            request.regression, _ = Regression.objects.get_or_create(
                series=request.series, metric=metric, finding=Regression.Finding.CHANGE_POINT,
                first_bad_build_id=request.build_id,
                defaults={
                    "kind": Regression.Kind.REGRESSION, "last_good_build_id": request.baseline_build_id,
                    "raised_build_id": nxt.build_id, "magnitude": suspect.get("magnitude"), "confidence": None,
                    "before_value": baseline, "after_value": value, "summary": summary,
                    "details": {"message": f"{metric} {baseline:.4g} -> {suspect.get('after', value):.4g} and "
                                f"{value:.4g} ({rel:+.1%}) on the next build: no worker could re-measure it, a "
                                f"second bad build confirms it (past {k:.3g} x noise {sd:.2%})",
                                "confirmed_by": "next_build", "noise": sd, "noise_source": noise.source,
                                **finding_explanation(series_id=request.series_id, metric=metric, points=points,
                                                      last_good_id=request.baseline_build_id, first_bad_id=request.build_id,
                                                      raised_id=nxt.build_id)},
                },
            )
        request.save()
        return request


def remeasurement_decide(*, remeasurement_id: int) -> Remeasurement:
    with transaction.atomic():
        request = _locked(remeasurement_id)
        if request.status != Remeasurement.Status.PENDING:
            return request
        points = {p.build_id: p for p in series_points(series_id=request.series_id)}
        new, old = points.get(request.build_id), points.get(request.baseline_build_id)
        reference = (request.suspect or {}).get("compile_reference")  # compile_cpu_ratio's, when it was suspected
        if reference is not None and new is not None and old is not None:
            changed = [p for p in (new, old) if p.values.get(request.metric) is not None
                       and p.reference(request.metric) != reference]
            if changed:  # re-run against another reference: not comparable with the suspect's
                return _undecided_reference_changed(request, build_id=changed[0].build_id, reference=reference,
                                                    other=changed[0].reference(request.metric))
        new_runs, old_runs = _runs(new, request.metric), _runs(old, request.metric)
        if (request.suspect or {}).get("rule") == TWO_BUILD:  # the rule that raised it decides, on the build's runs
            if len(new_runs) < MIN_RUNS:
                return request
            return _two_build_decide(request, list(points.values()), decided_by="remeasurement",
                                     summary=request.build.alert_summaries.filter(machine_class=request.series.machine_class).first())
        if (request.suspect or {}).get("rule") == engine_gate.RULE:  # the engine's alert, held for this re-run
            if len(new_runs) < MIN_RUNS:
                return request
            return _gate_decide(request, list(points.values()),
                                summary=request.build.alert_summaries.filter(machine_class=request.series.machine_class).first())
        if len(new_runs) < MIN_RUNS or len(old_runs) < MIN_RUNS:
            return request
        ordered = list(points.values())
        history = [p.values.get(request.metric) for p in comparable_points(ordered, request.metric, reference=old.reference(
            request.metric))[: ordered.index(old)]]
        sigma = max(request.suspect.get("noise") or 0.0, _run_spread(old_runs, new_runs)) or None
        decision = confirm_with_remeasurement(
            old_runs, new_runs, TRACKED_METRICS[request.metric], between_run_sigma=sigma, history=history,
        )
        request.decision = decision.to_dict()
        request.decided_at = timezone.now()
        request.status = {
            "regression": Remeasurement.Status.CONFIRMED,
            "no_change": Remeasurement.Status.REJECTED,
            "improvement": Remeasurement.Status.REJECTED,
        }.get(decision.decision, Remeasurement.Status.INCONCLUSIVE)
        if decision.decision == "regression":
            request.regression, _ = Regression.objects.get_or_create(
                series=request.series, metric=request.metric, finding=Regression.Finding.CHANGE_POINT,
                first_bad_build_id=request.build_id,
                defaults={
                    "kind": Regression.Kind.REGRESSION, "last_good_build_id": request.baseline_build_id,
                    "raised_build_id": request.build_id, "magnitude": decision.magnitude,
                    "confidence": decision.confidence, "before_value": decision.before, "after_value": decision.after,
                    "details": {"message": f"{request.metric} {decision.before:.4g} -> {decision.after:.4g} "
                                f"({decision.relative_change:+.1%}), confirmed by re-measurement "
                                f"({decision.runs_old} + {decision.runs_new} runs, z {decision.z:.1f})",
                                "confirmed_by": "remeasurement", "z": decision.z,
                                **finding_explanation(series_id=request.series_id, metric=request.metric, points=ordered,
                                                      last_good_id=request.baseline_build_id, first_bad_id=request.build_id,
                                                      raised_id=request.build_id)},
                    "summary": request.build.alert_summaries.filter(machine_class=request.series.machine_class).first(),
                },
            )
        request.save()
        return request


def _two_build_decide(request: Remeasurement, points: list[Point], *, summary, decided_by: str) -> Remeasurement:
    """A suspect of the two-build confirmation (``two_build.two_build_decision``) decided on the
    series' points up to the newest (``points``): confirmed where its alert starts at the suspect
    build (the finding stored, or found where detection stored it), rejected where a later build or
    the re-runs cleared it; otherwise still pending (the next build decides)."""
    ids = [p.build_id for p in points]
    metric = request.metric
    state, alert = two_build_decision(points, metric, TRACKED_METRICS[metric], build_index=ids.index(request.build_id))
    if state == "pending":
        return request
    request.decided_at = timezone.now()
    request.decision = {"decided_by": decided_by, "rule": TWO_BUILD, "decision": "regression" if alert else "no_change",
                        **({"before": alert.before, "after": alert.after, "relative_change": alert.relative_change,
                            "z": alert.z, "noise": alert.noise, "raised_build_id": ids[alert.raised_at]} if alert else {})}
    request.status = Remeasurement.Status.CONFIRMED if alert else Remeasurement.Status.REJECTED
    if alert is not None:
        runs = sum(len(p.run_values.get(metric) or [1]) for p in points[alert.first_bad : alert.raised_at + 1])
        request.regression, _ = Regression.objects.get_or_create(
            series=request.series, metric=metric, finding=Regression.Finding.CHANGE_POINT, first_bad_build_id=request.build_id,
            defaults={
                "kind": Regression.Kind.REGRESSION, "last_good_build_id": request.baseline_build_id,
                "raised_build_id": ids[alert.raised_at], "magnitude": alert.magnitude, "confidence": alert.confidence,
                "before_value": alert.before, "after_value": alert.after, "summary": summary,
                "details": {"message": f"{metric} {alert.before:.4g} -> {alert.after:.4g} ({alert.relative_change:+.1%}), "
                            f"{abs(alert.z):.1f} noise standard errors over {runs} runs{alert_note(alert)}",
                            "rule": TWO_BUILD, "confirmed_by": confirmed_by(alert), "z": alert.z, "noise": alert.noise,
                            **finding_explanation(series_id=request.series_id, metric=metric, points=points,
                                                  last_good_id=request.baseline_build_id, first_bad_id=request.build_id,
                                                  raised_id=ids[alert.raised_at])},
            },
        )
    request.save()
    return request


def _gate_decide(request: Remeasurement, points: list[Point], *, summary) -> Remeasurement:
    """An engine alert held for a re-run of its newest build (``engine_gate``) decided on the series'
    points up to the newest: its build's re-runs, or the next build where none came, off the alert's
    way by the rule's per-run criterion confirm it (the finding stored, or found where detection stored
    it); otherwise rejected; still pending while neither exists."""
    ids = [p.build_id for p in points]
    suspect, metric = request.suspect or {}, request.metric
    direction = TRACKED_METRICS[metric]
    state, how = engine_gate.gate_state(build_runs(points, metric), raised_at=ids.index(request.build_id),
                                        before=suspect.get("before"), after=suspect.get("after"), noise=suspect.get("noise"), z=suspect.get("z") or 0.0,
                                        direction=direction)
    if state == engine_gate.PENDING:
        return request
    request.decided_at = timezone.now()
    request.decision = {"decided_by": how or "remeasurement", "rule": engine_gate.RULE,
                        "decision": "regression" if state == engine_gate.CONFIRMED else "no_change"}
    request.status = Remeasurement.Status.CONFIRMED if state == engine_gate.CONFIRMED else Remeasurement.Status.REJECTED
    first_bad = suspect.get("first_bad_build_id")
    if state == engine_gate.CONFIRMED and first_bad is not None:
        request.regression, _ = Regression.objects.get_or_create(
            series=request.series, metric=metric, finding=Regression.Finding.CHANGE_POINT, first_bad_build_id=first_bad,
            defaults={
                "kind": Regression.Kind.REGRESSION, "last_good_build_id": suspect.get("last_good_build_id"),
                "raised_build_id": request.build_id, "magnitude": suspect.get("magnitude"),
                "confidence": suspect.get("confidence"), "before_value": suspect.get("before"),
                "after_value": suspect.get("after"), "summary": summary,
                "details": {"message": f"{metric} {suspect.get('before', 0):.4g} -> {suspect.get('after', 0):.4g} "
                            f"({suspect.get('relative_change', 0):+.1%}), {abs(suspect.get('z') or 0):.1f} noise standard "
                            f"errors{engine_gate.gate_note(how)}",
                            "rule": engine_gate.RULE, "confirmed_by": how, "z": suspect.get("z"), "noise": suspect.get("noise"),
                            **finding_explanation(series_id=request.series_id, metric=metric, points=points,
                                                  last_good_id=suspect.get("last_good_build_id"), first_bad_id=first_bad,
                                                  raised_id=request.build_id)},
            },
        )
    request.save()
    return request


def _undecided_reference_changed(request: Remeasurement, *, build_id: int, reference: str | None, other: str | None
                                 ) -> Remeasurement:
    """A suspect compile_cpu_ratio whose deciding runs (of build ``build_id``) were measured against
    another compile reference: ratios of two references are not comparable, so it is closed as
    inconclusive (a change of reference starts a new baseline, which detection judges from there)."""
    request.decision = {"decided_by": "reference_changed", "build_id": build_id, "decision": "not_comparable",
                        "compile_reference": reference, "other_compile_reference": other}
    request.decided_at = timezone.now()
    request.status = Remeasurement.Status.INCONCLUSIVE
    request.save()
    return request


def _run_spread(*builds: list[list[float]]) -> float:
    """Pooled sd of log run levels within each build: runs of one build that disagree (the suspect
    run against its re-run) widen the noise the decision uses, so one odd run cannot confirm itself."""
    squares, dof = 0.0, 0
    for runs in builds:
        levels = [math.log(statistics.median(run)) for run in runs if run and min(run) > 0]
        if len(levels) >= 2:
            mean = sum(levels) / len(levels)
            squares += sum((x - mean) ** 2 for x in levels)
            dof += len(levels) - 1
    return math.sqrt(squares / dof) if dof else 0.0


def _runs(point: Point | None, metric: str) -> list[list[float]]:
    if point is None:
        return []
    return point.samples.get(metric) or [[v] for v in point.run_values.get(metric, [])]
