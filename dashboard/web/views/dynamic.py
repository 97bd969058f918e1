from django.shortcuts import render

from contract import colour_reasons
from contract.modes import EXPORTING_MODES

from dashboard.results.selectors.builds import build_list_for_class, build_summary_get, builds_newest_time, machine_class_list
from dashboard.results.selectors.common import RANGES, build_ref, range_since
from dashboard.regressions.services.noise_bands import noise_bands_of_build
from dashboard.results.selectors.dynamic import (GAP_HIGHLIGHT, dynamic_gaps, dynamic_options, dynamic_pairs, gap_summary, pair_failure,
                                                 pairs_compile_noise)
from dashboard.results.selectors.dynamic_families import dynamic_blockers, dynamic_run_notes, family_gaps
from dashboard.results.page_cache import cached_page
from dashboard.web import charts, params


@cached_page
@params.answers_bad_parameters
def dynamic(request):
    classes = machine_class_list()
    machine_class = params.choice(request, "machine", classes, classes[0] if classes else None)
    options = dynamic_options(machine_class=machine_class) if machine_class else []
    modes = sorted({m for m, _, _ in options})
    mode = params.choice(request, "mode", modes, "default" if "default" in modes else (modes[0] if modes else None))
    dtypes = sorted({d for m, d, _ in options if m == mode})
    # float32 first where measured (the core suite's dtype; the families' bf16 is one pick away)
    dtype = params.choice(request, "dtype", dtypes, "float32" if "float32" in dtypes else (dtypes[0] if dtypes else None))
    # Which dims the regimes marked (docs/case-config.md): "" every declared dim, else e.g. "batch";
    # a backed and an unbacked case pair up only within the same dims.
    dims_options = sorted({d for m, t, d in options if (m, t) == (mode, dtype)})
    dims_pick = params.choice(request, "dims", dims_options, "" if "" in dims_options else (dims_options[0] if dims_options else ""))
    dims = tuple(dims_pick.split(",")) if dims_pick else None
    range_key = params.range_key(request)
    build = params.build(request, "build")
    if build is not None and build_summary_get(build_id=build.id, machine_class=machine_class) is None:
        raise params.BadParameter("build", f"build {build_ref(build)} has no results on machine class {machine_class!r}")
    context = {"classes": classes, "machine_class": machine_class, "modes": modes, "mode": mode, "dtypes": dtypes,
               "dtype": dtype, "range_key": range_key, "ranges": list(RANGES), "highlight": GAP_HIGHLIGHT,
               "exporting": mode in EXPORTING_MODES, "dims_options": dims_options, "dims": dims_pick,
               "failed_reason": colour_reasons.FAILED}
    if not options:
        return render(request, "web/dynamic.html", context)

    since = range_since(newest=builds_newest_time(machine_class=machine_class), range_key=range_key)
    gaps = dynamic_gaps(machine_class=machine_class, mode=mode, dtype=dtype, since=since, dims=dims)
    chosen = None
    if build is None and gaps.builds:
        chosen = gaps.builds[-1]
    elif build is not None:
        chosen = next((b for b in gaps.builds if b.build_id == build.id), None)
        if chosen is None:  # a build older than the range: read it alone
            alone = dynamic_gaps(machine_class=machine_class, mode=mode, dtype=dtype, since=None, build_ids=[build.id], dims=dims)
            chosen = alone.builds[0] if alone.builds else None
    pairs = dynamic_pairs(machine_class=machine_class, mode=mode, dtype=dtype, build_id=chosen.build_id, dims=dims) if chosen else []
    if pairs:  # compile-time ratios judged by their series' noise (docs/noise-and-findings.md)
        pairs_compile_noise(pairs=pairs, machine_class=machine_class, mode=mode, dtype=dtype, dims=dims,
                            bands=noise_bands_of_build(machine_class=machine_class, build_id=chosen.build_id))
    builds = build_list_for_class(machine_class=machine_class)
    blockers = dynamic_blockers(machine_class=machine_class, mode=mode, dtype=dtype, build_id=chosen.build_id, dims=dims) if chosen else {}
    context.update(
        chosen=chosen,
        picked_id=build.id if build else None,
        pairs=[(p, pair_failure(p.backed, p.unbacked), blockers.get(p.workload)) for p in pairs],
        families=family_gaps(pairs, blockers),
        run_notes=dynamic_run_notes(machine_class=machine_class, mode=mode, dtype=dtype, build_id=chosen.build_id, dims=dims) if chosen else [],
        summary=gap_summary(pairs),
        # Unbacked on these dims against backed on every dim, where no backed case of the dims was measured.
        every_dim_backed=sorted(p.workload for p in pairs if p.backed_every_dim),
        every_dim_all=bool(pairs) and all(p.backed_every_dim for p in pairs if p.unbacked),
        builds=builds,
        trends=charts.dynamic_trends(gaps=gaps, machine_class=machine_class),
        any_synthetic=any(b.synthetic for b in builds[:1]) or any(b.synthetic for b in builds if chosen and b.build_id == chosen.build_id),
    )
    return render(request, "web/dynamic.html", context)
