from __future__ import annotations

from drf_spectacular.utils import extend_schema

from contract.suggest import unknown_message
from dashboard.api.exceptions import FieldError
from dashboard.api.serializers import CompareQuerySerializer, ComparePageSerializer, CompareRowSerializer
from dashboard.api.filters import resolve_build
from dashboard.api.views.common import READ_ERRORS, ApiView, query
from dashboard.results.selectors.builds import build_classes, build_summary_get, build_summary_previous
from dashboard.results.same_build import same_build, same_build_message
from dashboard.results.selectors.common import build_ref
from dashboard.results.selectors.names import machine_class_names
from dashboard.regressions.compare import builds_compare_judged
from dashboard.results.selectors.compare import compare_rows_select, compare_summary


def machine_class_for(build, given: str | None, field: str = "machine_class") -> str:
    """The machine class asked about: the given one (400 with a did-you-mean when no host, run or
    result ever had it: nothing can come of waiting on it), else the build's only one."""
    if given:
        known = machine_class_names()
        if given not in known:
            raise FieldError(field, unknown_message("machine class", given, known))
        return given
    classes = build_classes(build_id=build.id)
    if len(classes) == 1:
        return classes[0]
    if not classes:
        raise FieldError(field, f"build {build_ref(build)} has no runs on any machine class; name one", 400)
    raise FieldError(field, f"build {build_ref(build)} ran on several machine classes: choose one of {', '.join(classes)} with {field}")


class CompareView(ApiView):
    @extend_schema(operation_id="compare", summary="Compare two builds case by case (only the cases in both)",
                   description="`results` are the common cases (paginated) with old/new/relative change per metric and "
                   "flags; `summary` the geomean (totals for counts) over every row the filter keeps.",
                   parameters=[CompareQuerySerializer], responses={200: ComparePageSerializer, **READ_ERRORS}, tags=["compare"])
    def get(self, request):
        q = query(request, CompareQuerySerializer)
        head = resolve_build("head", q["head"])
        machine_class = machine_class_for(head, q.get("machine_class"))
        head_summary = build_summary_get(build_id=head.id, machine_class=machine_class)
        if head_summary is None:
            raise FieldError("head", f"build {build_ref(head)} has no results on machine class {machine_class!r}", 404)
        if q.get("base"):
            base = resolve_build("base", q["base"])
            if build_summary_get(build_id=base.id, machine_class=machine_class) is None:
                raise FieldError("base", f"build {build_ref(base)} has no results on machine class {machine_class!r}", 404)
        else:
            previous = build_summary_previous(summary=head_summary)
            if previous is None:
                raise FieldError("base", f"no build before {build_ref(head)} on {machine_class!r}: name a base", 404)
            base = previous.build
        if same_build(base, head):
            raise FieldError("base", same_build_message(base, head, ref=build_ref))
        threshold = q["threshold"] / 100
        comparison = builds_compare_judged(base=base, head=head, machine_class=machine_class, metric=q["metric"], threshold=threshold)
        rows = compare_rows_select(rows=comparison.rows, only=q["filter"], sort=q.get("sort") or "", descending=q["dir"] == "desc")
        summary = compare_summary(rows=rows, threshold=threshold)
        return self.page(request, rows, CompareRowSerializer, base=build_ref(base), head=build_ref(head),
                         machine_class=machine_class, metric=q["metric"], threshold=q["threshold"], common=len(comparison.rows),
                         summary={name: vars(change) for name, change in summary.items()},
                         only_base=[_one_sided(o) for o in comparison.only_base],
                         only_head=[_one_sided(o) for o in comparison.only_head])


def _one_sided(o) -> dict:
    return {"workload": o.workload, "config": o.config, "status": o.status, "result": o.result_id}
