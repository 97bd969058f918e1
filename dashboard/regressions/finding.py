"""One finding as its own page shows it (``/regressions/<id>/``): everything its board row has (the
numbers, the likeliest cause, the "what changed" pair, the repro) and more: a title that says what
happened to which case, every reason whole and the first bad build's whole error. Display only:
detection decides what is a finding."""
from __future__ import annotations

from dataclasses import dataclass

from contract.explain import error_text
from contract.facts import FindingDetails
from contract.metrics import BY_NAME
from dashboard.regressions.board import BoardRow, board_groups, new_reason
from dashboard.regressions.models import Regression
from dashboard.results.models import Result

STATUS_FINDINGS = (Regression.Finding.STARTED_FAILING, Regression.Finding.STATUS_CHANGED)
_METRIC_WORDS = {"status": "status", "graph_breaks": "graph breaks", "recompiles": "recompiles",
                 "dynamic_gap": "unbacked / backed gap"}


@dataclass(frozen=True)
class FindingPage:
    row: BoardRow  # the board's row of it: numbers, repro, the "what changed" pair
    title: str  # what happened, to which case: "masked_attention started failing: pass → compile_error"
    metric_label: str
    error: str  # the first bad build's whole error ("type: message"), where its case failed
    error_status: str
    reasons: list[tuple[str, str]]  # (reason whole, its location or ""), the error left out (shown apart)
    reason_word: str  # what a reason of it is: "new graph-break reason", "new recompile reason", "reason"


def metric_label(metric: str) -> str:
    """A finding's metric as the pages name it: a result metric's label, else its word."""
    return BY_NAME[metric].label if metric in BY_NAME else _METRIC_WORDS.get(metric, metric.replace("_", " "))


def finding_title(regression: Regression, row: BoardRow) -> str:
    """One line: the workload, what happened and to which figure, the values where they say it."""
    name, n = regression.series.workload.name, row.numbers
    finding = regression.finding
    if finding == Regression.Finding.STARTED_FAILING:
        return f"{name} started failing: {n.values_text}"
    if finding == Regression.Finding.STATUS_CHANGED:
        return f"{name} fails differently: {n.values_text}"
    reason = new_reason(regression)
    if reason:
        kind = "graph-break" if finding == Regression.Finding.NEW_GRAPH_BREAK else "recompile"
        return f"{name}: new {kind} reason “{reason}”"
    label = metric_label(regression.metric)
    values = f" ({n.values_text})" if n.values_text else ""
    if finding == Regression.Finding.DYNAMIC_GAP:
        return f"{name}: unbacked / backed gap opened{values}"
    change = f" {n.change_text}" if n.change_text else ""
    return f"{name}: {label}{change}{values}"


def finding_error(regression: Regression) -> tuple[str, str]:
    """(status, whole error) of the case at the first bad build where it did not pass (the result
    stored last), else its finding's first reason when that is the error (a status finding)."""
    result = (Result.objects.filter(series_id=regression.series_id, build_id=regression.first_bad_build_id)
              .order_by("-id").values("status", "error").first())
    error = error_text(result["error"]) if result else ""
    if error and result["status"] != "pass":
        return result["status"], error
    details = FindingDetails(regression.details)
    reasons = details.get("reasons")
    if regression.finding in STATUS_FINDINGS and reasons:
        return details.get("after") or "", str(reasons[0])
    return "", ""


_REASON_WORDS = {Regression.Finding.NEW_GRAPH_BREAK: "new graph-break reason",
                 Regression.Finding.NEW_RECOMPILE_REASON: "new recompile reason"}


def finding_page(regression: Regression) -> FindingPage:
    row = board_groups([regression])[0].rows[0]
    status, error = finding_error(regression)
    details = FindingDetails(regression.details)
    locations = details.get("locations") or []
    reasons = [(str(reason), str(locations[i] or "") if i < len(locations) else "")
               for i, reason in enumerate(details.get("reasons") or []) if str(reason) != error]
    if regression.finding in STATUS_FINDINGS and error:
        reasons = []  # the reason of a status finding is its error, shown whole apart
    return FindingPage(row=row, title=finding_title(regression, row), metric_label=metric_label(regression.metric),
                       error=error, error_status=status, reasons=reasons,
                       reason_word=_REASON_WORDS.get(regression.finding, "reason"))


