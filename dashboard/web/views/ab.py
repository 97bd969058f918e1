"""The A/B page: a base build against variants of it (``/ab/?base=B&variant=V[&variant=...]``)."""
from django.shortcuts import render

from dashboard.regressions.ab import (
    AB_METRICS,
    SORT_KEYS,
    ab_compare,
    ab_rows_select,
    ab_variant_list,
    ab_variants_of,
)
from dashboard.results.selectors.builds import build_classes
from dashboard.results.selectors.common import build_ref
from dashboard.results.variants import base_of
from dashboard.web import params


@params.answers_bad_parameters
def ab(request):
    base = params.build(request, "base")
    variants = params.builds(request, "variant")
    if base is None and variants:
        base = base_of(variants[0])
        if base is None:
            raise params.BadParameter("base", f"not given, and build {build_ref(variants[0])} has no stored base build")
    if base is None:
        return render(request, "web/ab.html", {"variant_list": [(v, base_of(v)) for v in ab_variant_list()]})
    variants = variants or ab_variants_of(base=base)
    classes = [c for c in build_classes(build_id=base.id) if not variants or c in build_classes(build_id=variants[0].id)]
    machine_class = params.choice(request, "machine", classes, classes[0] if classes else None)
    context = {"base": base, "variants": variants, "classes": classes, "machine_class": machine_class,
               "metrics": AB_METRICS, "sort_keys": SORT_KEYS,
               "workload": (request.GET.get("workload") or "").strip()[:200],
               "only_changed": params.choice(request, "changed", ("0", "1"), "0") == "1",
               "sort": params.choice(request, "sort", SORT_KEYS, ""), "dir": params.choice(request, "dir", ("asc", "desc"), "asc")}
    if machine_class is None or not variants:
        return render(request, "web/ab.html", context)
    sections = [ab_compare(base=base, variant=v, machine_class=machine_class) for v in variants]
    config_labels = sorted({g.config for s in sections for g in s.geomeans})
    context["config"] = params.choice(request, "config", config_labels, "")
    shown = [(s, ab_rows_select(rows=s.rows, workload=context["workload"], config=context["config"],
                                only_changed=context["only_changed"], sort=context["sort"], descending=context["dir"] == "desc"))
             for s in sections]
    context.update(sections=shown, config_labels=config_labels)
    return render(request, "web/ab.html", context)
