"""Thin views: read through selectors, render a template."""
from django.shortcuts import get_object_or_404, render

from dashboard.results.models import Run
from dashboard.results.selectors import run_list_recent, run_results, run_speedup_chart


def home(request):
    summaries = run_list_recent(limit=20)
    latest = summaries[0].run if summaries else None
    return render(
        request,
        "web/home.html",
        {
            "summaries": summaries,
            "latest": latest,
            "chart": run_speedup_chart(run=latest) if latest else None,
            "any_synthetic": any(s.run.synthetic for s in summaries),
        },
    )


def run_detail(request, run_id):
    run = get_object_or_404(Run.objects.select_related("build", "machine"), pk=run_id)
    return render(
        request,
        "web/run.html",
        {"run": run, "results": run_results(run=run), "chart": run_speedup_chart(run=run)},
    )
