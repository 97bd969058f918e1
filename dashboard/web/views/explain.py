from django.http import Http404
from django.shortcuts import render

from dashboard.results.models import Result
from dashboard.results.selectors.common import METRICS
from dashboard.results.selectors.explain import NotTheSameCase, results_explain
from dashboard.web import params


@params.answers_bad_parameters
def explain(request, before_id: int, after_id: int):
    """What changed between two results of one case (docs/explain.md)."""
    metric = params.choice(request, "metric", [m.name for m in METRICS], None)
    try:
        explained = results_explain(before_id=before_id, after_id=after_id, metric=metric)
    except Result.DoesNotExist:
        raise Http404("no such result") from None
    except NotTheSameCase as problem:
        raise params.BadParameter(problem.field, str(problem)) from None
    return render(request, "web/explain.html", {"x": explained, "r": explained.report, "metrics": METRICS, "metric": metric})
