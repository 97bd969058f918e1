
from django.shortcuts import render

from dashboard.results.selectors.builds import (
    build_classes,
    build_list_for_class,
    build_summary_copy,
    build_summary_get,
    build_summary_latest,
    build_summary_previous,
    machine_class_list,
)
from dashboard.results.same_build import same_build, same_build_message
from dashboard.results.selectors.common import METRICS, METRICS_BY_NAME, build_ref
from dashboard.results.selectors.compare_tables import compare_tables
from dashboard.regressions.services.compare_cells import compare_judged
from dashboard.results.selectors.compare import (
    FILTERS,
    SORT_KEYS,
    compare_measured_metrics,
    compare_rows_select,
    compare_summary_shown,
    compare_summary_cases,
)
from dashboard.results.page_cache import cached_page
from dashboard.web import params
from dashboard.web.export import export_format, table_response

PAGE_SIZE = 200
FILTER_LABELS = {"all": "all", "regressed": "regressed", "improved": "improved", "new_failures": "new failures",
                 "new_graph_breaks": "new graph-break reasons"}
SORT_COLUMNS = [("workload", "workload", False), ("config", "configuration", False), ("status", "status", False)] + [
    (m.name, m.label, True) for m in METRICS
]


def _measured(name, build, machine_class):
    summary = build_summary_get(build_id=build.id, machine_class=machine_class)
    if summary is None:
        raise params.BadParameter(name, f"build {build_ref(build)} has no results on machine class {machine_class!r}")
    return summary


@cached_page
@params.answers_bad_parameters
def compare(request):
    classes = machine_class_list()
    head = params.build(request, "head")
    base = params.build(request, "base")
    default_class = next((c for c in build_classes(build_id=head.id)), None) if head else None
    machine_class = params.choice(request, "machine", classes, default_class or (classes[0] if classes else None))
    metric = params.choice(request, "metric", [m.name for m in METRICS], "speedup")
    threshold = params.number(request, "threshold", 5.0, low=0.0, high=1000.0)
    only = params.choice(request, "filter", FILTERS, "all")
    sort = params.choice(request, "sort", SORT_KEYS, "")
    direction = params.choice(request, "dir", ("asc", "desc"), "asc")
    params.number(request, "page", 1, low=1, high=1_000_000, integer=True)  # a bad one is refused before the work
    fmt = export_format(request)
    context = {"classes": classes, "machine_class": machine_class, "metrics": METRICS, "metric": METRICS_BY_NAME[metric],
               "threshold": threshold, "only": only, "filters": FILTERS, "sort": sort, "dir": direction}
    if machine_class is None:
        return render(request, "web/compare.html", context)

    head_summary = _measured("head", head, machine_class) if head else build_summary_latest(machine_class=machine_class)
    base_summary = _measured("base", base, machine_class) if base else build_summary_previous(summary=head_summary)
    context.update(head=head_summary, base=base_summary, builds=build_list_for_class(machine_class=machine_class))
    copy = build_summary_copy(summary=head_summary) if base_summary is None else base_summary
    if copy is not None and same_build(copy.build, head_summary.build):  # nothing is coloured
        context["same_build"] = same_build_message(head_summary.build, copy.build, ref=build_ref)
        return render(request, "web/compare.html", context)
    if base_summary is None:  # nothing earlier: say what was measured and offer its variants, preselect none
        context["variants_here"] = [s for s in context["builds"] if s.build.overrides and head_summary and s.build_id != head_summary.build_id]
        return render(request, "web/compare.html", context)

    comparison = compare_judged(
        base=base_summary.build, head=head_summary.build, machine_class=machine_class, metric=metric, threshold=threshold / 100
    )
    rows = compare_rows_select(rows=comparison.rows, only=only, sort=sort, descending=direction == "desc")
    if fmt != "html":
        return table_response(fmt=fmt, filename=f"compare-{machine_class}-{build_ref(base_summary.build)}-{build_ref(head_summary.build)}",
                              tables=compare_tables(comparison=comparison, rows=rows))
    page = params.page(request, rows, PAGE_SIZE)
    columns, unmeasured = compare_measured_metrics(rows=comparison.rows, keep=metric)
    context.update(
        columns=columns,
        unmeasured=unmeasured,
        comparison=comparison,
        rows=page.object_list,
        row_count=len(rows),
        summary=compare_summary_shown(comparison=comparison, rows=rows, only=only, sort=sort, threshold=threshold / 100),
        summary_cases=compare_summary_cases(rows=rows),
        filter_links=[
            (f, FILTER_LABELS[f], len(comparison.rows) if f == "all" else sum(f in r.flags for r in comparison.rows))
            for f in FILTERS
        ],
        sort_columns=[c for c in SORT_COLUMNS if not c[2] or c[0] in {m.name for m in columns}],
        one_sided=[("Only in base", comparison.only_base, "only-base"), ("Only in head", comparison.only_head, "only-head")],
        page=page.number,
        pages=page.paginator.num_pages,
        page_range=page.paginator.page_range,
        any_synthetic=base_summary.synthetic or head_summary.synthetic,
    )
    return render(request, "web/compare.html", context)
