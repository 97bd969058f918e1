"""One judgement behind every colour (issue #42): each coloured cell of /compare/ (and the home page's
class tables, which read its comparison) links the finding detection stored for its case and metric
between the two builds, or says in its tooltip why the change is not one (``contract.colour_reasons``);
every timed cell says whose noise it was judged against: the series' own repeated runs of one build,
or the class's prior (each build ran the case once)."""
from __future__ import annotations

from django.db.models import Count, Max

from contract import colour_reasons as why
from contract.comparison import BETTER, WORSE
from contract.findings import too_noisy
from contract.metrics import BY_NAME
from detection import YOUNG_BUILDS
from dashboard.regressions.history import TRACKED_METRICS
from dashboard.regressions.models import Regression
from dashboard.results.models import Build, BuildSummary, Result
from dashboard.results.selectors.compare import Comparison, NoiseBands

# /compare/'s count columns as detection names their findings' metric.
FINDING_METRIC = {"graph_break_count": "graph_breaks", "recompile_count": "recompiles"}
COLOURED = (WORSE, BETTER)


def comparison_reasons(comparison: Comparison, *, bands: NoiseBands) -> None:
    """Sets each row's changes' ``finding`` (the id of the finding stored for the case and metric
    whose first bad build lies after the base, up to the head), ``reason`` (why a coloured change
    without one is no finding) and ``borrowed`` (a timed change judged by the class's prior)."""
    rows = comparison.rows
    if not rows:
        return
    base, head = comparison.base, comparison.head
    between = Build.objects.filter(ordered_at__gt=base.ordered_at, ordered_at__lte=head.ordered_at)
    findings: dict[tuple[int, str], int] = {}
    # The class's findings in the range (every row's series is of the class): a join, not 2,000 series ids as parameters.
    for series_id, metric, finding_id in (Regression.objects.filter(series__machine_class=comparison.machine_class,
                                                                    first_bad_build__in=between)
                                          .exclude(status=Regression.Status.INVALID)
                                          .order_by("-id").values_list("series_id", "metric", "id")):
        findings.setdefault((series_id, metric), finding_id)
    default = bands(-1)  # the bands of a series with no repeated runs of its own: the class's prior
    found = {series_id for series_id, _ in findings}  # most rows' series have none: 17,000 cells not looked up
    # A cell's defaults are builds_compare's (no finding, not borrowed): only the cells that differ are
    # set, a row's borrowed metrics found once per row (a series without bands of its own: the prior's, once).
    noisy = {name for name, metric in BY_NAME.items() if metric.noisy}
    prior = _borrowed(default, default, noisy)
    unexplained = []  # (row, its coloured changes without a finding): they need the series' history below
    for row in rows:
        own = bands(row.series_id)
        changes = row.changes
        if row.base_status != row.head_status:
            row.status_finding = findings.get((row.series_id, "status"))
        for name in prior if own is default else _borrowed(own, default, noisy):
            if name in changes:
                changes[name].borrowed = True
        if row.series_id in found:
            for name, c in changes.items():
                if name in BY_NAME:
                    c.finding = findings.get((row.series_id, FINDING_METRIC.get(name, name)))
        coloured = [(BY_NAME[name], c) for name, c in changes.items() if c.tone in COLOURED and not c.finding and name in BY_NAME]
        if coloured or (row.base_status != row.head_status and not row.status_finding):
            unexplained.append((row, coloured))
    counts, newest = _history(series_ids=[row.series_id for row, _ in unexplained], before=head.ordered_at,
                              machine_class=comparison.machine_class)
    for row, coloured in unexplained:
        if row.base_status != row.head_status and not row.status_finding:
            row.status_reason = why.not_finding(why.status_reason(row.head_status, builds_before=counts.get(row.series_id, 0)))
        for metric, c in coloured:
            c.reason = why.not_finding(_reason(metric, c, builds_before=counts.get(row.series_id, 0),
                                               neighbours=newest.get(row.series_id) == base.ordered_at))


def _borrowed(own: dict[str, float], default: dict[str, float], noisy: set[str]) -> list[str]:
    """The timed metrics whose band in ``own`` (a series' bands) is the class's prior's."""
    return [name for name, band in own.items() if name in noisy and band == default.get(name)]


def _history(*, series_ids: list[int], before, machine_class: str) -> tuple[dict[int, int], dict[int, object]]:
    """Per series, how many builds before ``before`` measured it, counted up to ``YOUNG_BUILDS`` + 1
    (no reason tells a count past ``YOUNG_BUILDS``: the reasons are those of the whole history), and
    when the newest of them was ordered: a grouped read over the series (those whose coloured cells
    need a reason, a few hundred of a compare's 2,000 rows) in the class's newest ``YOUNG_BUILDS`` + 1
    builds before ``before``, through ``result_series_build``; the series fewer of those measured, over
    their whole history (a whole history of every series: 76 ms of a cold compare at 1,000,000 results)."""
    counts: dict[int, int] = {}
    newest: dict[int, object] = {}
    if not series_ids:
        return counts, newest
    recent = list(BuildSummary.objects.filter(machine_class=machine_class, ordered_at__lt=before)
                  .order_by("-ordered_at", "-build_id").values_list("ordered_at", flat=True)[:YOUNG_BUILDS + 1])
    rest = series_ids
    if len(recent) > YOUNG_BUILDS:
        # Those builds' (series, build) pairs on the class, counted here: one read without the series as
        # parameters (600 of them cost the grouped read more than its 5,760 pairs: 13 -> 8 ms at 1,000,000 results).
        ordered = dict(Build.objects.filter(ordered_at__gte=recent[-1], ordered_at__lt=before).values_list("id", "ordered_at"))
        wanted, measured = set(series_ids), {}
        for series_id, build_id in (Result.objects.filter(build_id__in=list(ordered), series__machine_class=machine_class)
                                    .values_list("series_id", "build_id")):
            if series_id in wanted:
                measured.setdefault(series_id, set()).add(build_id)
        for series_id, builds in measured.items():
            counts[series_id], newest[series_id] = len(builds), max(ordered[b] for b in builds)
        rest = [s for s in series_ids if counts.get(s, 0) <= YOUNG_BUILDS]
    if rest:
        _count_builds(Result.objects.filter(series_id__in=rest, build__ordered_at__lt=before), counts, newest)
    return counts, newest


def _count_builds(results, counts: dict[int, int], newest: dict[int, object]) -> None:
    for series_id, n, at in (results.values("series_id").annotate(n=Count("build_id", distinct=True), at=Max("build__ordered_at"))
                             .values_list("series_id", "n", "at")):
        counts[series_id], newest[series_id] = n, at


def _reason(metric, change, *, builds_before: int, neighbours: bool) -> str:
    """The first of: a phase, a count, an untracked metric, a series too noisy to track, a young
    series, two builds that are not neighbours, else detection found no change point."""
    if metric.explains:
        return why.PHASE
    if not metric.noisy:
        return why.COUNT
    if metric.name not in TRACKED_METRICS:
        return why.UNTRACKED
    if too_noisy(change.sd):
        return why.noisy_reason(change.sd)
    if builds_before <= YOUNG_BUILDS:
        return why.young_reason(builds_before)
    if not neighbours:
        return why.NOT_NEIGHBOURS
    return why.DETECTION_QUIET
