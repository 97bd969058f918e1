"""A finding's likeliest cause (contract.explain over the case's results at its last good and first
bad builds; docs/explain.md): stored in ``Regression.details["cause"]`` when the finding is made, so
the regressions page, its API and the alerts read it without comparing again."""
from __future__ import annotations

from contract.explain import finding_metric
from dashboard.results.models import Result
from dashboard.results.selectors.explain import results_explain


def finding_cause(*, series_id: int, metric: str, last_good_id: int | None, first_bad_id: int) -> dict | None:
    """``{"kind", "name", "share", "text"}`` of the phase, kernel or graph break that accounts for
    most of the change, or None (no earlier build, no explained metric, nothing stands out)."""
    explained_metric = finding_metric(metric)
    if last_good_id is None or explained_metric is None:
        return None
    ids = dict(Result.objects.filter(series_id=series_id, build_id__in=(last_good_id, first_bad_id))
               .order_by("id").values_list("build_id", "id"))  # the result stored last of each build
    if last_good_id not in ids or first_bad_id not in ids:
        return None
    cause = results_explain(before_id=ids[last_good_id], after_id=ids[first_bad_id], metric=explained_metric).report["cause"]
    if cause is None:
        return None
    return {**cause, "before_result": ids[last_good_id], "after_result": ids[first_bad_id]}
