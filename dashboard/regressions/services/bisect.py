"""Bisection (issue #31, docs/bisect.md): find the first bad build between a good and a bad one, or
the override of a variant that makes it bad, by running the case on midpoints.

``bisection_start`` orders the range (``bisect_range.builds_between``; for overrides a chain of
variants made here, the base first and one more override each) and requests the first runs;
``bisection_advance`` runs after each of its runs ends (``pipeline``: the dispatch's ``run_finished``)
and, once none is open, decides what it can and requests the next runs. Every run goes through the
dispatch path (the class's queue, ``reason="bisection"``: no point of any series, no finding) and
is one attempt; an attempt that left no value (a lost worker whose case the sweep failed, a timeout)
is requested again. Decisions are ``detection.bisection``'s: both ends first (a regression that does
not reproduce ends it), then each midpoint good, bad or unknown, unknown adding attempts up to
``max_attempts`` and then taking the nearer end. Bounded by ``max_steps`` midpoints and ``max_runs``
cases; ``bisection_cancel`` stops it and cancels its open runs.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from contract.catalog import requestable_name
from dashboard.dispatch.services import MatrixError, run_cancel_open, run_request
from dashboard.regressions.bisect_range import (
    EXACT_METRICS,
    bisectable_metric,
    builds_between,
    known_to_class,
    run_value,
    series_case,
)
from dashboard.regressions.history import TRACKED_METRICS, series_points
from dashboard.regressions.models import Bisection, BisectionRun, Regression
from dashboard.regressions.services.commits import commit_chain, commit_culprit, commit_range_of, commit_range_request
from dashboard.regressions.services.bisect_overrides import override_chain, partner_search_ended, partner_search_new
from dashboard.regressions.signals import culprit_pair_found
from dashboard.results.models import Build, Run, Series
from dashboard.results.selectors.common import build_ref
from dashboard.results.variants import base_of
from detection.bisection import BAD, GOOD, UNKNOWN, classify, ends_differ, nearest, steps_needed

log = logging.getLogger(__name__)
OPEN = (Run.Status.PENDING, Run.Status.RUNNING)


class BisectError(ValueError):
    """A bisection that cannot start; ``field`` names what is wrong (the API answers 400, or 409 for ``status``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def _limits(attempts, max_attempts, max_steps, max_runs) -> dict:
    limits = {"attempts": attempts or settings.BISECT_ATTEMPTS, "max_attempts": max_attempts or settings.BISECT_MAX_ATTEMPTS,
              "max_steps": max_steps or settings.BISECT_MAX_STEPS, "max_runs": max_runs or settings.BISECT_MAX_RUNS}
    if limits["max_attempts"] < limits["attempts"]:
        raise BisectError("max_attempts", f"must be at least attempts ({limits['attempts']})")
    return limits


def bisection_start(*, requested_by: str, regression: Regression | None = None, series: Series | None = None,
                    metric: str | None = None, good: Build | None = None, bad: Build | None = None,
                    kind: str = Bisection.Kind.BUILDS, attempts: int | None = None, max_attempts: int | None = None,
                    max_steps: int | None = None, max_runs: int | None = None, size: str | None = None,
                    backend: str | None = None) -> Bisection:
    """Start a bisection of ``regression`` (its series, metric, last good and first bad build), or of
    ``series``/``metric`` between ``good`` and ``bad``. ``kind="overrides"``: ``bad`` (the first bad
    build) is a variant and ``good`` its base: the chain of its overrides is searched. Raises
    ``BisectError`` naming the field; nothing is written then. ``size``/``backend``: how the case
    runs, by default as the series' newest result ran."""
    if regression is not None:
        series, metric = regression.series, regression.metric
        # over commits, ``good``/``bad`` may narrow the finding's range to a builds bisection's culprit pair
        narrowed = kind == Bisection.Kind.COMMITS and good is not None and bad is not None
        good, bad = (good, bad) if narrowed else (regression.last_good_build, regression.first_bad_build)
        if kind == Bisection.Kind.OVERRIDES and bad.overrides:
            good = base_of(bad)
    if metric is None or not bisectable_metric(metric):
        raise BisectError("metric", f"{metric!r} cannot be bisected: a tracked metric, status, graph_breaks or recompiles")
    if good is None:
        raise BisectError("last_good_build", "no last good build to start from")
    machine_class = series.machine_class
    if kind == Bisection.Kind.OVERRIDES:
        if not bad.overrides:
            raise BisectError("kind", f"build {build_ref(bad)} is not a variant: it has no overrides to bisect")
        if good.overrides or good.git_sha != bad.git_sha:
            raise BisectError("last_good_build", f"build {build_ref(good)} is not the base build of {build_ref(bad)}")
    elif kind not in (Bisection.Kind.BUILDS, Bisection.Kind.COMMITS):
        raise BisectError("kind", f"unknown kind {kind!r}; choose from builds, overrides, commits")
    limits = _limits(attempts, max_attempts, max_steps, max_runs)
    commit_range = _listed_range(good=good, bad=bad, machine_class=machine_class) if kind == Bisection.Kind.COMMITS else None
    for field, build in (("last_good_build", good), ("first_bad_build", bad)):
        if not known_to_class(build=build, machine_class=machine_class):
            raise BisectError(field, f"no worker of {machine_class} has build {build_ref(build)} (nor its base)")
    busy = f"regression {regression.id} is being bisected already: cancel that one first" if regression else ""
    with transaction.atomic():
        if regression is not None:  # the regression's row: concurrent starts of it wait for each other
            Regression.objects.select_for_update().filter(pk=regression.pk).first()
        if regression is not None and Bisection.objects.filter(regression=regression, status=Bisection.Status.RUNNING).exists():
            raise BisectError("status", busy)
        meta = {}
        if kind == Bisection.Kind.OVERRIDES:
            builds, items = override_chain(base=good, variant=bad)
        elif kind == Bisection.Kind.COMMITS:
            (builds, meta), items = commit_chain(commit_range=commit_range, good=good, bad=bad), []
            if len(builds) < 3:
                raise BisectError("commits", f"needs a source build: all {len(commit_range.commits)} commits between "
                                  f"{build_ref(good)} and {build_ref(bad)} lie across C++ changes")
        else:
            builds, items = builds_between(good=good, bad=bad, machine_class=machine_class), []
        if len(builds) < 3 and kind == Bisection.Kind.BUILDS:
            raise BisectError("last_good_build", f"no build between {build_ref(good)} and {build_ref(bad)} is known to "
                              f"workers of {machine_class}: the pair is adjacent already")
        try:
            with transaction.atomic():  # a start that raced past the lock meets the one-running constraint: 409, not 500
                bisection = Bisection.objects.create(
                    regression=regression, series=series, metric=metric, kind=kind, builds=[b.id for b in builds], overrides=items,
                    low=0, high=len(builds) - 1, requested_by=requested_by[:150], **limits,
                    **{**series_case(series=series), **({"size": size} if size else {}), **({"backend": backend} if backend else {})},
                    result={"builds": len(builds), "steps_expected": steps_needed(len(builds)), **meta},
                )
        except IntegrityError:
            if regression is None:
                raise
            raise BisectError("status", busy) from None
        _advance(bisection)
        bisection.save()
    return bisection


def _listed_range(*, good: Build, bad: Build, machine_class: str):
    """The listed commits between ``good`` and ``bad`` (issue #41); raises ``BisectError`` naming
    ``commits`` while they are not (asked of a worker of the class then: send again once listed)."""
    if good.overrides or bad.overrides:
        raise BisectError("kind", "a variant's overrides are bisected with kind overrides, not over commits")
    row = commit_range_of(good=good, bad=bad)
    if row is None or row.status != row.Status.LISTED:
        row = commit_range_request(good=good, bad=bad, machine_class=machine_class, again=True)
        why = f"the last answer: {row.error}; " if row.error else ""
        raise BisectError("commits", f"the commits between {build_ref(good)} and {build_ref(bad)} are not listed yet "
                          f"({why}asked a worker of {machine_class} with a PyTorch mirror): send again once listed")
    if len(row.commits) < 2:
        only = f"{row.commits[0]['sha'][:12]} is the only commit between them" if row.commits else "they are one commit"
        raise BisectError("commits", f"nothing to bisect between {build_ref(good)} and {build_ref(bad)}: {only}")
    return row


def bisection_advance(*, bisection_id: int) -> Bisection:
    """Decide what the finished runs tell and request the next ones (idempotent: nothing happens
    while a run of it is open, or once it has ended)."""
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update(of=("self",)).select_related("series").get(pk=bisection_id)
        if bisection.status == Bisection.Status.RUNNING and not bisection.runs.filter(run__status__in=OPEN).exists():
            _advance(bisection)
            bisection.save()
    return bisection


def bisection_cancel(*, bisection_id: int, cancelled_by: str) -> Bisection:
    """Stop a running bisection: its open runs are cancelled (queued cases dropped, running ones stopped)."""
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update().get(pk=bisection_id)
        if bisection.status != Bisection.Status.RUNNING:
            return bisection
        for attempt in bisection.runs.filter(run__status__in=OPEN).select_related("run"):
            run_cancel_open(run=attempt.run, cancelled_by=cancelled_by)
        _finish(bisection, Bisection.Status.CANCELLED, f"cancelled by {cancelled_by}")
        bisection.save()
    return bisection


def _values(bisection: Bisection) -> tuple[dict[int, list[float]], int, int]:
    """Per index, the values its finished runs measured; runs requested; attempts lost (no value)."""
    # A partner search starts with its ends measured by its parent (``bisect_overrides``).
    values: dict[int, list[float]] = {int(i): list(v) for i, v in bisection.result.get("seed", {}).items()}
    requested = lost = 0
    for attempt in bisection.runs.all():
        requested += 1
        value = run_value(run_id=attempt.run_id, series=bisection.series, metric=bisection.metric)
        if value is None:
            lost += 1
        else:
            values.setdefault(attempt.index, []).append(value)
    return values, requested, lost


def _noise(bisection: Bisection) -> float:
    """The series' run-to-run relative sd (``regressions.noise``); 0 for an exact metric."""
    from dashboard.regressions.noise import point_noise  # noqa: PLC0415 (noise reads history, as remeasure does)

    if bisection.metric not in TRACKED_METRICS:
        return 0.0
    return point_noise(series_points(series_id=bisection.series_id), bisection.metric).sd


def _advance(bisection: Bisection) -> None:
    values, requested, lost = _values(bisection)
    bisection.result = {**bisection.result, "runs": requested, "lost": lost}
    exact = bisection.metric in EXACT_METRICS
    sd = _noise(bisection)
    bisection.result["noise"] = sd
    while True:
        low, high = bisection.low, bisection.high
        if not bisection.result.get("reproduced"):
            short = [i for i in (low, high) for _ in range(bisection.attempts - len(values.get(i, [])))]
            if short:
                return _request(bisection, short, requested)
            if not ends_differ(values[low], values[high], sd=sd, exact=exact):
                more = [i for i in (low, high) if len(values[i]) < bisection.max_attempts]
                if more and not exact:
                    return _request(bisection, more, requested)
                return _finish(bisection, Bisection.Status.NOT_REPRODUCED, _ends_text(bisection, values))
            bisection.result.update(reproduced=True, good_values=values[low], bad_values=values[high])
        if high - low <= 1:
            return _finish(bisection, Bisection.Status.DONE, "")
        if len(bisection.steps) >= bisection.max_steps:
            return _finish(bisection, Bisection.Status.INCONCLUSIVE, f"{bisection.max_steps} steps spent")
        mid = (low + high) // 2
        if len(values.get(mid, [])) < bisection.attempts:
            return _request(bisection, [mid] * (bisection.attempts - len(values.get(mid, []))), requested)
        found = classify(values[low], values[high], values[mid], sd=sd, exact=exact)
        decision, how = found.decision, "near end" if found.near_end else "measured"
        if decision == UNKNOWN:
            if len(values[mid]) < bisection.max_attempts and not exact:
                return _request(bisection, [mid], requested)
            decision, how = nearest(found), "nearest"
            if decision == UNKNOWN:
                return _finish(bisection, Bisection.Status.INCONCLUSIVE, f"build {mid + 1} is neither good nor bad")
        bisection.steps = [*bisection.steps, {"index": mid, "build": bisection.builds[mid], "decision": decision, "how": how,
                                              "values": values[mid], **found.to_dict()}]
        if decision == BAD:
            bisection.high = mid
        elif decision == GOOD:
            bisection.low = mid


def _request(bisection: Bisection, indexes: list[int], requested: int) -> None:
    if requested + len(indexes) > bisection.max_runs:
        return _finish(bisection, Bisection.Status.FAILED, f"case budget spent: {requested} of {bisection.max_runs} requested")
    series, config = bisection.series, bisection.series.config.case_config
    builds = Build.objects.in_bulk({bisection.builds[i] for i in indexes})
    for index in indexes:
        build = builds[bisection.builds[index]]
        try:
            run = run_request(build=build, machine_class=series.machine_class, size=bisection.size,
                              requested_by=f"bisection {bisection.id}"[:150], reason=Run.Reason.BISECTION,
                              workloads=[requestable_name(series.workload.name)], modes=[config.compile_mode], regimes=[config.shape_regime],
                              dtypes=[config.dtype], backend=bisection.backend,
                              notes=f"bisection {bisection.id} of {bisection.metric}: build {index + 1} of {len(bisection.builds)}")
        except MatrixError as exc:
            return _finish(bisection, Bisection.Status.FAILED, f"cannot request the case: {exc.field}: {exc.message}")
        BisectionRun.objects.create(bisection=bisection, index=index, build=build, run=run)
    bisection.result = {**bisection.result, "runs": requested + len(indexes)}
    return None


def _ends_text(bisection: Bisection, values: dict) -> str:
    low, high = values.get(bisection.low, []), values.get(bisection.high, [])
    return (f"the ends do not differ past noise: good {_fmt(low)}, bad {_fmt(high)} ({len(low)} + {len(high)} runs)")


def _fmt(values: list[float]) -> str:
    return "/".join(f"{v:.4g}" for v in values) or "-"


def _finish(bisection: Bisection, status: str, why: str) -> None:
    bisection.status, bisection.finished_at = status, timezone.now()
    if status == Bisection.Status.DONE:
        _found(bisection)
    else:
        bisection.result = {**bisection.result, "message": why}
    if bisection.parent_id:
        partner_search_ended(child=bisection)
    elif status == Bisection.Status.DONE and (child := partner_search_new(parent=bisection, values=_values(bisection)[0])):
        _advance(child)  # does the override found need another? its first runs
        child.save()


def _found(bisection: Bisection) -> None:
    builds = Build.objects.in_bulk([bisection.builds[bisection.low], bisection.builds[bisection.high]])
    good, bad = builds[bisection.builds[bisection.low]], builds[bisection.builds[bisection.high]]
    bisection.culprit_build = bad
    commits = f"{good.git_sha}...{bad.git_sha}" if good.git_sha != bad.git_sha else ""
    result = {"last_good": build_ref(good), "first_bad": build_ref(bad), "commits": commits}
    if bisection.kind == Bisection.Kind.COMMITS:
        culprit = commit_culprit(bisection=bisection, values=_values(bisection)[0])
        result["commit"], message = culprit, culprit["message"]
        if bisection.regression_id:
            Regression.objects.filter(pk=bisection.regression_id).update(culprit_commit=culprit)
    elif bisection.kind == Bisection.Kind.OVERRIDES:
        section, key, value = bisection.overrides[bisection.high - 1]
        result["override"] = f"{section}.{key}={value}"
        message = f"override {result['override']} makes it bad (added to the {bisection.high - 1} before it)"
    else:
        message = f"first bad build {build_ref(bad)} ({bad}), last good {build_ref(good)}" + (
            f"; commits {good.git_sha[:12]}...{bad.git_sha[:12]}" if commits else "")
    steps, runs = len(bisection.steps), bisection.result.get("runs", 0)
    result["message"] = f"{message}: {steps} step{'s' * (steps != 1)}, {runs} runs"
    bisection.result = {**bisection.result, **result}
    if bisection.regression_id and bisection.kind == Bisection.Kind.BUILDS:
        Regression.objects.filter(pk=bisection.regression_id).update(culprit_build=bad, culprit_range=commits)
        if commits:  # the commits between the culprit pair, bisected next where the class bisects automatically
            transaction.on_commit(lambda: culprit_pair_found.send(sender=Bisection, bisection_id=bisection.id))
