from django.shortcuts import render
from django.urls import reverse

from dashboard.regressions.selectors import open_regression_counts
from contract.case_config import SHORT, SHOWN_AXES, allowed
from dashboard.regressions.services.home_cells import home_cells
from dashboard.results.models import Config, Workload
from dashboard.results.selectors.builds import builds_newest_time, machine_class_list
from dashboard.results.selectors.common import RANGES, config_lookups, range_since
from dashboard.results.selectors.overview import FIGURES, overview_list, overview_trend
from dashboard.results.selectors.runs import run_list_recent
from dashboard.results.selectors.build_cases import build_cases
from dashboard.results.services.latest_tables import latest_tables, tables_of_cases
from dashboard.dispatch.selectors_intake import intake_per_class
from dashboard.results.page_cache import cached_page
from dashboard.web import charts, params
from dashboard.web.last_night import heading, last_night


@cached_page
@params.answers_bad_parameters
def overview(request):
    classes = machine_class_list()
    machine_class = params.choice(request, "machine", classes, classes[0] if classes else None)
    range_key = params.range_key(request)
    wanted = {axis: params.choice(request, SHORT[axis], allowed(axis)) for axis in SHOWN_AXES}
    configs = {c.id: c for c in Config.objects.all()}  # one read for the tables and the trends
    config_ids = list(Config.objects.filter(**config_lookups("", **{k: v for k, v in wanted.items() if v})).values_list("id", flat=True))

    blocks = overview_list(config_ids=config_ids, open_regressions=open_regression_counts, cells=home_cells, classes=classes,
                           configs=configs)
    every_config = len(config_ids) == len(configs)
    for block in blocks:  # the latest build's tables: stored (every configuration), else from its cases read once
        tables = (latest_tables(summary=block.latest) if every_config else
                  tables_of_cases(summary=block.latest, config_ids=config_ids,
                                  cases=build_cases(build_id=block.latest.build_id, machine_class=block.machine_class)))
        block.suites, block.training, block.not_passed = tables.suites, tables.training, tables.not_passed
    trends = None
    if machine_class:
        since = range_since(newest=builds_newest_time(machine_class=machine_class), range_key=range_key)
        trend = overview_trend(machine_class=machine_class, since=since, config_ids=config_ids, configs=configs)
        trends = charts.overview_trends(trend=trend, figures=FIGURES, machine_class=machine_class)
        trends["compare_url"] = reverse("web:compare")
    recent = run_list_recent(limit=10)
    nights = last_night(blocks=blocks)
    for block, night in zip(blocks, nights):
        block.outcome = night.outcome
    return render(
        request,
        "web/overview.html",
        {
            "blocks": blocks,
            "intakes": intake_per_class(),
            "nights": nights,
            "nights_heading": heading(nights),
            "figures": FIGURES,
            "trends": trends,
            "recent": recent,
            "workloads": list(Workload.objects.order_by("name").values_list("name", flat=True)),
            "classes": classes,
            "machine_class": machine_class,
            "range_key": range_key,
            "ranges": list(RANGES),
            "filters": {SHORT[axis]: (wanted[axis], allowed(axis)) for axis in SHOWN_AXES},
            "any_synthetic": any(b.latest.synthetic for b in blocks) or any(s.run.synthetic for s in recent),
        },
    )
