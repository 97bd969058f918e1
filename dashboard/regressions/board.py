"""The regressions page as a morning board: what regressed at which build, newest build first.

One group per (first bad build x machine class), groups in build order (``Build.ordered_at``,
newest first); each row says what a person acts on: before -> after, the change and its noise,
the confidence (deterministic findings are facts, not estimates), last good / first bad build
and the command that repeats the case. Display only: detection decides what is a finding.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from dashboard.regressions.models import Regression
from dashboard.results.models import Build, Result

GAP_METRIC = "dynamic_gap"


def shown_values(regression: Regression) -> tuple[float | None, float | None]:
    """(before, after) as pages, the API and the CLI show them. Detection stores the unbacked gap
    as ``unbacked/backed - 1``; it is shown as the ratio unbacked/backed (0.81: unbacked 19% slower)."""
    before, after = regression.before_value, regression.after_value
    if regression.metric == GAP_METRIC:
        return (None if before is None else before + 1, None if after is None else after + 1)
    return before, after


def board_order(regressions: QuerySet[Regression]) -> QuerySet[Regression]:
    """Newest first bad build first, then machine class, workload, metric: a page's groups never
    interleave."""
    return regressions.select_related("first_bad_build", "last_good_build", "series__workload", "series__config").order_by(
        "-first_bad_build__ordered_at", "-first_bad_build_id", "series__machine_class", "series__workload__name",
        "series__config_id", "metric", "id",
    )


@dataclass
class BoardRow:
    regression: Regression
    before: float | str | None
    after: float | str | None
    change: float | None  # relative, signed as measured (after / before - 1)
    noise: float | None  # the noise the change is measured against (relative), when detection gave one
    confidence: float | None
    deterministic: bool  # a fact (a status, a count, a reason, a ratio over a threshold), not an estimate
    baseline_state: bool  # no earlier build with this case: the state the series started in
    repro: str


@dataclass
class BoardGroup:
    build: Build
    machine_class: str
    rows: list[BoardRow] = field(default_factory=list)

    @property
    def last_good(self) -> Build | None:
        """The last good build most rows name (they share one when detection ran on one run)."""
        builds = [r.regression.last_good_build for r in self.rows if r.regression.last_good_build is not None]
        return max(builds, key=builds.count) if builds else None


def _row(regression: Regression, repro: str) -> BoardRow:
    details = regression.details if isinstance(regression.details, dict) else {}
    before, after = shown_values(regression)
    change = None
    if isinstance(before, (int, float)) and isinstance(after, (int, float)) and before:
        change = after / before - 1
    if before is None and after is None and (details.get("before") or details.get("after")):
        before, after = details.get("before") or "–", details.get("after") or "–"  # statuses
    noise = details.get("noise")
    return BoardRow(
        regression=regression, before=before, after=after, change=change,
        noise=noise if isinstance(noise, (int, float)) else None, confidence=regression.confidence,
        deterministic=regression.finding != Regression.Finding.CHANGE_POINT,
        baseline_state=regression.last_good_build_id is None, repro=repro,
    )


def board_table(groups: list[BoardGroup]) -> list[dict]:
    """The board's rows, flat, for its CSV and JSON export."""
    from dashboard.results.selectors.common import ref_for  # noqa: PLC0415

    def ref(build) -> str | None:
        return ref_for(git_sha=build.git_sha, local_label=build.local_label) if build else None

    return [
        {"build": ref(g.build), "torch_version": g.build.torch_version, "build_date": g.build.ordered_at.date().isoformat(),
         "machine_class": g.machine_class, "workload": r.regression.series.workload.name,
         "config": str(r.regression.series.config), "metric": r.regression.metric, "finding": r.regression.finding,
         "kind": r.regression.kind, "status": r.regression.status, "before": r.before, "after": r.after,
         "change": r.change, "noise": r.noise, "confidence": r.confidence, "deterministic": r.deterministic,
         "baseline_state": r.baseline_state, "last_good": ref(r.regression.last_good_build),
         "first_bad": ref(r.regression.first_bad_build), "repro": r.repro, "message": r.regression.message}
        for g in groups for r in g.rows
    ]


def board_groups(regressions) -> list[BoardGroup]:
    """A page of ``board_order``'s rows as groups, with each case's repro at its first bad build."""
    regressions = list(regressions)
    wanted = {(r.series_id, r.first_bad_build_id) for r in regressions}
    repros: dict[tuple, str] = {}
    if wanted:
        rows = (
            Result.objects.filter(series_id__in={s for s, _ in wanted}, build_id__in={b for _, b in wanted})
            .exclude(repro="").order_by("id").values_list("series_id", "build_id", "repro")
        )
        repros = {(s, b): repro for s, b, repro in rows}  # the one stored last
    groups: dict[tuple, BoardGroup] = {}
    for regression in regressions:
        key = (regression.first_bad_build_id, regression.series.machine_class)
        group = groups.setdefault(key, BoardGroup(build=regression.first_bad_build, machine_class=key[1]))
        group.rows.append(_row(regression, repros.get((regression.series_id, regression.first_bad_build_id), "")))
    return list(groups.values())
