from django.shortcuts import get_object_or_404, render

from dashboard.dispatch.selectors import run_case_progress, run_case_tasks
from dashboard.results.host import HOST_BOUND_SHARE, HOST_SPEED_MARK_BELOW
from dashboard.results.artifacts import results_with_artifacts
from dashboard.results.models import Run
from dashboard.results.selectors.run_cost import run_cost
from dashboard.results.selectors.runs import (
    run_title,
    run_progress,
    run_results,
    run_speedup_chart,
    with_host_speed,
    with_run_to_run,
)
from dashboard.web import params

PAGE_SIZE = 500


@params.answers_bad_parameters
def run_detail(request, run_id):
    run = get_object_or_404(Run.objects.select_related("build", "machine"), pk=run_id)
    only = params.choice(request, "status", ("all", "failed"), "all")
    progress = run_progress(run=run)
    cases = run_case_progress(run=run)  # a run requested through the workers: where its cases are
    page = params.page(request, run_results(run=run, only=only), PAGE_SIZE,
                       count=progress.failed if only == "failed" else progress.stored)
    return render(
        request,
        "web/run.html",
        {
            "run": run,
            "title": run_title(run=run),
            "only": only,
            "progress": progress,
            "cases": cases,
            "unfinished": run_case_tasks(run=run, states=("queued", "running", "failed", "cancelled"))[:200] if cases else [],
            "open": run.status in (Run.Status.PENDING, Run.Status.RUNNING),
            "results": results_with_artifacts(with_run_to_run(with_host_speed(page.object_list), machine_class=run.machine.machine_class,
                                                            upto=run.build)),
            "host_bound_share": HOST_BOUND_SHARE,
            "host_slowed_below": HOST_SPEED_MARK_BELOW,
            "page": page.number,
            "pages": page.paginator.num_pages,
            "page_range": page.paginator.page_range,
            "chart": run_speedup_chart(run=run),
            "cost": run_cost(run=run),
            "any_synthetic": False,  # the run page has its own banner
        },
    )
