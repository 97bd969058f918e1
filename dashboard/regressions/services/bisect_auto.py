"""Automatic bisection (docs/bisect.md): a new regression of a machine class listed in
``BISECT_AUTO_CLASSES`` ("*": every class) is bisected when workers of the class know builds between
its last good and first bad build."""
from __future__ import annotations

import logging

from django.conf import settings

from dashboard.regressions.models import Bisection, Regression
from dashboard.results.models import Build
from dashboard.regressions.services.bisect import BisectError, bisection_start
from dashboard.regressions.services.commits import commit_range_request

log = logging.getLogger(__name__)


def auto_bisect_class(machine_class: str) -> bool:
    classes = settings.BISECT_AUTO_CLASSES
    return "*" in classes or machine_class in classes


def bisections_start_auto(*, regression_ids: list[int]) -> list[int]:
    """Start a bisection of each of these regressions that qualifies and was never bisected; returns
    the new bisections' ids. One that cannot start (adjacent builds, a build no worker has) is skipped."""
    started = []
    rows = (Regression.objects.filter(pk__in=regression_ids, kind=Regression.Kind.REGRESSION, last_good_build__isnull=False)
            .select_related("series", "first_bad_build", "last_good_build").order_by("id"))
    for regression in rows:
        if not auto_bisect_class(regression.series.machine_class) or Bisection.objects.filter(regression=regression).exists():
            continue
        try:
            started.append(bisection_start(regression=regression, requested_by="automatic").id)
        except BisectError as exc:
            log.info("regression %s not bisected: %s: %s", regression.id, exc.field, exc.message)
    return started


def commit_range_class(machine_class: str) -> bool:
    classes = settings.COMMIT_RANGE_CLASSES
    return "*" in classes or machine_class in classes or auto_bisect_class(machine_class)


def commit_ranges_request_auto(*, regression_ids: list[int]) -> list[int]:
    """Ask a worker to list the commits of each new regression of a class that wants them
    (``COMMIT_RANGE_CLASSES``, or one that bisects automatically) whose builds are two commits;
    returns the ranges' ids. Once listed, ``commit_bisections_start_auto`` bisects them."""
    ranges = []
    rows = (Regression.objects.filter(pk__in=regression_ids, last_good_build__isnull=False)
            .select_related("series", "first_bad_build", "last_good_build").order_by("id"))
    for regression in rows:
        good, bad = regression.last_good_build, regression.first_bad_build
        if commit_range_class(regression.series.machine_class) and good.git_sha != bad.git_sha and not (good.overrides or bad.overrides):
            ranges.append(commit_range_request(good=good, bad=bad, machine_class=regression.series.machine_class).id)
    return sorted(set(ranges))


def commit_bisections_start_auto(*, commit_range) -> list[int]:
    """Once a range is listed: bisect over its commits each open regression between its builds of a
    class that bisects automatically, never bisected over commits before (one that cannot start,
    e.g. a range of one commit or all C++, is skipped with its reason logged). One search per series:
    its findings between the same builds share a cause; a count (graph breaks, recompiles, status)
    is searched first, as it needs no noise and one run a build."""
    from dashboard.regressions.bisect_range import EXACT_METRICS  # noqa: PLC0415

    if commit_range.status != commit_range.Status.LISTED:
        return []
    started, searched = [], {b.series_id for b in Bisection.objects.filter(kind=Bisection.Kind.COMMITS)
                             if b.builds[0] == commit_range.good_build_id and b.builds[-1] == commit_range.bad_build_id}
    rows = (Regression.objects.filter(last_good_build=commit_range.good_build, first_bad_build=commit_range.bad_build,
                                      kind=Regression.Kind.REGRESSION)
            .exclude(status__in=[Regression.Status.INVALID, Regression.Status.FIXED, Regression.Status.WONTFIX])
            .select_related("series").order_by("id"))
    # ... and those whose bisection over builds named these two as its culprit pair
    narrowed = [b.regression for b in Bisection.objects.filter(
        kind=Bisection.Kind.BUILDS, status=Bisection.Status.DONE, culprit_build=commit_range.bad_build, regression__isnull=False,
        parent__isnull=True).select_related("regression__series") if b.builds[b.low] == commit_range.good_build_id]
    for regression in sorted([*rows, *narrowed], key=lambda r: (r.metric not in EXACT_METRICS, r.id)):
        if not auto_bisect_class(regression.series.machine_class) or regression.series_id in searched:
            continue
        try:
            exact = {"attempts": 1} if regression.metric in EXACT_METRICS else {}
            started.append(bisection_start(regression=regression, kind=Bisection.Kind.COMMITS, requested_by="automatic",
                                           good=commit_range.good_build, bad=commit_range.bad_build, **exact).id)
            searched.add(regression.series_id)
        except BisectError as exc:
            log.info("regression %s not bisected over commits: %s: %s", regression.id, exc.field, exc.message)
    return started


def culprit_pair_follow(*, bisection_id: int) -> list[int]:
    """After a bisection over builds named two builds of different commits (their culprit pair), of
    a class that bisects automatically: the commits between them listed by a worker (asked now),
    then bisected (now, when listed already; else when the list arrives)."""
    bisection = Bisection.objects.select_related("series").get(pk=bisection_id)
    if not auto_bisect_class(bisection.series.machine_class) or bisection.status != Bisection.Status.DONE:
        return []
    good, bad = (Build.objects.get(pk=bisection.builds[i]) for i in (bisection.low, bisection.high))
    if good.overrides or bad.overrides:
        return []
    return commit_bisections_start_auto(commit_range=commit_range_request(good=good, bad=bad, machine_class=bisection.series.machine_class))


def on_commit_range_stored(sender, *, commit_range, **kwargs) -> None:
    """``signals.commit_range_stored``: a range this process listed is bisected over its commits."""
    commit_bisections_start_auto(commit_range=commit_range)


def on_culprit_pair_found(sender, *, bisection_id: int, **kwargs) -> None:
    """``signals.culprit_pair_found``: the commits between a bisection's culprit pair, followed."""
    culprit_pair_follow(bisection_id=bisection_id)
