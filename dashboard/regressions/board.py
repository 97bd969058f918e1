"""The regressions page as a morning board: what regressed at which build, newest build first.

One group per (first bad build x machine class), groups in build order (``Build.ordered_at``,
newest first); each row says what a person acts on: before -> after, the change and its noise,
the confidence (deterministic findings are facts, not estimates), last good / first bad build
and the command that repeats the case. Display only: detection decides what is a finding.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from contract.findings import GAP_METRIC, FindingNumbers, finding_numbers, reason_headline
from contract.explain import finding_metric
from contract.facts import FindingDetails
from dashboard.regressions.models import Regression, Remeasurement
from dashboard.results.models import Build, Result

__all__ = ["GAP_METRIC", "regression_numbers", "remeasurements_shown", "shown_values", "suspect_numbers"]


def regression_numbers(regression: Regression) -> FindingNumbers:
    """The finding's numbers as every surface shows them (``contract.findings``, computed once):
    before/after (the gap as the ratio unbacked/backed; a status change's statuses), the change
    after/before - 1, worse/better, its noise, and a confidence of 1 for a deterministic finding."""
    details = FindingDetails(regression.details)
    before, after = regression.before_value, regression.after_value
    if before is None and after is None and (details.get("before") or details.get("after")):
        before, after = details.get("before") or "–", details.get("after") or "–"  # statuses
    noise = details.get("noise")
    return finding_numbers(metric=regression.metric, before=before, after=after, kind=regression.kind,
                           noise=noise if isinstance(noise, (int, float)) else None, confidence=regression.confidence,
                           certain=regression.finding != Regression.Finding.CHANGE_POINT, new_reason=new_reason(regression))


def new_reason(regression: Regression) -> str:
    """The first line of a new graph-break or recompile reason's finding's first new reason; "" for
    any other finding (``contract.findings.reason_headline``)."""
    details = FindingDetails(regression.details)
    return reason_headline(regression.finding, details.get("reasons"))


def suspect_numbers(request: Remeasurement) -> FindingNumbers:
    """A suspect waiting for re-measurement, shown like a finding (a regression if confirmed)."""
    suspect = request.suspect if isinstance(request.suspect, dict) else {}
    return finding_numbers(metric=request.metric, before=suspect.get("before"), after=suspect.get("after"),
                           kind="suspect", noise=suspect.get("noise"), confidence=suspect.get("confidence"))


def remeasurements_shown(requests) -> list[tuple[Remeasurement, FindingNumbers]]:
    return [(request, suspect_numbers(request)) for request in requests]


def shown_values(regression: Regression) -> tuple[float | str | None, float | str | None]:
    """(before, after) as pages, the API and the CLI show them (``regression_numbers``)."""
    numbers = regression_numbers(regression)
    return numbers.before, numbers.after


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
    numbers: FindingNumbers  # before, after, change, worse/better, noise, confidence: one computation
    baseline_state: bool  # no earlier build with this case: the state the series started in
    repro: str
    # (last good result id, first bad result id): the "what changed" view's pair (docs/explain.md)
    explain_ids: tuple[int, int] | None = None

    @property
    def explain_metric(self) -> str | None:
        return finding_metric(self.regression.metric)


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


def _row(regression: Regression, repro: str, result_ids: dict[tuple, int]) -> BoardRow:
    good = result_ids.get((regression.series_id, regression.last_good_build_id))
    bad = result_ids.get((regression.series_id, regression.first_bad_build_id))
    return BoardRow(regression=regression, numbers=regression_numbers(regression),
                    baseline_state=regression.last_good_build_id is None, repro=repro,
                    explain_ids=(good, bad) if good and bad else None)


def case_result_ids(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """(series id, build id) -> the id of that build's result stored last in that series."""
    if not pairs:
        return {}
    rows = (Result.objects.filter(series_id__in={s for s, _ in pairs}, build_id__in={b for _, b in pairs})
            .order_by("id").values_list("series_id", "build_id", "id"))
    return {(s, b): i for s, b, i in rows}


def board_table(groups: list[BoardGroup]) -> list[dict]:
    """The board's rows, flat, for its CSV and JSON export."""
    from dashboard.results.selectors.common import ref_for  # noqa: PLC0415

    from dashboard.regressions.selectors.commits import commit_ranges_of_rows, commit_summary, culprit_commit_text  # noqa: PLC0415

    def ref(build) -> str | None:
        return ref_for(git_sha=build.git_sha, local_label=build.local_label) if build else None

    ranges = commit_ranges_of_rows([r.regression for g in groups for r in g.rows])

    def commits(regression) -> dict:  # issue #41: the commit range and the culprit commit
        summary = commit_summary(ranges.get((regression.last_good_build_id, regression.first_bad_build_id)))
        return {"commits": summary["text"] if summary else "", "culprit_commit": (regression.culprit_commit or {}).get("sha", ""),
                "culprit_commit_text": culprit_commit_text(regression.culprit_commit)}

    return [
        {"id": r.regression.id, "build": ref(g.build), "torch_version": g.build.torch_version, "build_date": g.build.ordered_at.date().isoformat(),
         "machine_class": g.machine_class, "workload": r.regression.series.workload.name,
         "config": str(r.regression.series.config), "metric": r.regression.metric, "finding": r.regression.finding,
         "kind": r.regression.kind, "status": r.regression.status, **r.numbers.as_dict(),
         "baseline_state": r.baseline_state, "last_good": ref(r.regression.last_good_build),
         "first_bad": ref(r.regression.first_bad_build), "repro": r.repro, "message": r.regression.message,
         **commits(r.regression)}
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
    result_ids = case_result_ids(wanted | {(r.series_id, r.last_good_build_id) for r in regressions if r.last_good_build_id})
    groups: dict[tuple, BoardGroup] = {}
    for regression in regressions:
        key = (regression.first_bad_build_id, regression.series.machine_class)
        group = groups.setdefault(key, BoardGroup(build=regression.first_bad_build, machine_class=key[1]))
        group.rows.append(_row(regression, repros.get((regression.series_id, regression.first_bad_build_id), ""), result_ids))
    return list(groups.values())
