from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from contract.suggest import unknown_message
from contract.suites import family_model
from contract.metrics import COMPILE_TIMES
from dashboard.regressions.selectors import regression_markers
from contract.case_config import SHORT, SHOWN_AXES, allowed
from dashboard.results.artifacts import results_with_artifacts
from dashboard.results.selectors.eager_gap import slower_than_eager_cause, with_slower_than_eager_causes
from dashboard.results.selectors.common import RANGES, NotFound, range_since
from dashboard.results.selectors.names import stored_workload_names
from dashboard.results.selectors.runs import with_run_to_run
from dashboard.results.selectors.suites import notes_grouped
from dashboard.results.selectors.workloads import (
    series_history,
    workload_classes_newest,
    workload_get,
    workload_latest,
    workload_series,
)
from dashboard.results.page_cache import cached_page
from dashboard.web import charts, params


def _default_config(configs):
    """default mode, static shapes when measured; otherwise the first configuration."""
    ranked = sorted((c.case_config for c in configs),
                    key=lambda c: (c.compile_mode != "default", c.shape_regime != "static", c.dtype, c.compile_mode, c.shape_regime))
    return ranked[0] if ranked else None


def _dims(config) -> str:
    return ",".join(config.dims) if config.dims else ""


@cached_page
@params.answers_bad_parameters
def workload(request, name):
    try:
        item = workload_get(name=name)
    except NotFound:
        raise Http404(unknown_message("workload", name, stored_workload_names())) from None
    all_series = workload_series(workload=item)
    newest_first = workload_classes_newest(workload=item)  # it opens on the class measured last
    classes = sorted({s.machine_class for s in all_series}, key=lambda c: newest_first.index(c) if c in newest_first else len(newest_first))
    machine_class = params.choice(request, "machine", classes, classes[0] if classes else None)
    series_here = [s for s in all_series if s.machine_class == machine_class]
    fallback = _default_config([s.config for s in series_here])
    wanted = {axis: params.choice(request, SHORT[axis], allowed(axis), getattr(fallback, axis) if fallback else None)
              for axis in SHOWN_AXES}
    range_key = params.range_key(request)
    # Which dims the regime marked (docs/case-config.md): "" every declared dim, else e.g. "batch".
    dims_options = sorted({_dims(s.config.case_config) for s in series_here})
    dims = params.choice(request, "dims", dims_options, "" if "" in dims_options or not dims_options else dims_options[0])

    selected = next((s for s in series_here if all(getattr(s.config.case_config, a) == v for a, v in wanted.items())
                     and _dims(s.config.case_config) == dims), None)
    history = series_history(series=selected) if selected else None
    if history and history.latest:
        results_with_artifacts([history.latest])  # its kept artifact, if here
    trends = None
    if history and history.points:
        since = range_since(newest=history.points[-1].at, range_key=range_key)
        shown = [p for p in history.points if since is None or p.at >= since]
        trends = charts.series_trends(points=shown, markers=regression_markers(series_ids=[selected.id]), machine_class=machine_class)
        trends["compare_url"] = reverse("web:compare")
    latest = workload_latest(workload=item, machine_class=machine_class) if machine_class else []
    latest = with_run_to_run(latest, machine_class=machine_class, upto=max((r.build for r in latest), key=lambda b: b.ordered_at, default=None))
    return render(
        request,
        "web/workload.html",
        {
            "workload": item,
            "family": family_model(item.name),
            "classes": classes,
            "machine_class": machine_class,
            "latest": with_slower_than_eager_causes(latest),  # a speedup under 1: why, from the kernel profile
            "slower_cause": slower_than_eager_cause(history.latest if history else None),
            "latest_notes": notes_grouped((r.run.notes, r.config.case_config.label) for r in latest),
            "selected": selected,
            "selected_label": selected.config.case_config.label if selected else " · ".join(str(v) for v in wanted.values()),
            "history": history,
            "trends": trends,
            "range_key": range_key,
            "ranges": list(RANGES),
            **{SHORT[axis]: value for axis, value in wanted.items()},
            "pickers": {
                SHORT[axis]: (value, sorted({getattr(s.config.case_config, axis) for s in series_here}))
                for axis, value in wanted.items()
            } | ({"dims": (dims, dims_options)} if dims_options not in ([], [""]) else {}),
            "any_synthetic": any(r.run.synthetic for r in latest),
            "compile_times": COMPILE_TIMES,  # one cell: cold / warm (contract.metrics)
        },
    )
