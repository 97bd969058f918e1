"""The data each page's charts draw, as compact JSON for ``static/web/charts.js`` (which turns
it into Plotly traces). Values are rounded to 4 significant digits and x values shared between
traces to keep pages light."""
from __future__ import annotations

import datetime as dt

from contract.explain import FINDING_METRICS
from contract.findings import ratio_interval, sd_of_halfwidth, too_noisy
from contract.metrics import chart_lines
from dashboard.results.host import HOST_SENSITIVE_METRICS, slowed_points
from dashboard.results.selectors.workloads import run_spread
from dashboard.web.phase_charts import phase_charts


def sig(value, digits: int = 4):
    return None if value is None else float(f"{value:.{digits}g}")


# The y axis title of each unit: every chart says what its numbers are.
AXIS_UNITS = {"rate": "share of cases", "x": "ratio (×)", "s": "seconds", "ms": "milliseconds", "MB": "MB", "GB": "GB", "": "count"}


def axis_title(unit: str) -> str:
    return AXIS_UNITS.get(unit, unit)


def build_tick(*, ref: str, version: str) -> str:
    """A build's category on a trend's x axis: its torch version and short sha (and its local
    label when the version does not already end with it), e.g. ``2.12.1+cu130 · 7269437``. The
    axis is categorical, in build order: one point per build, however close their dates."""
    sha, _, label = ref.partition("+")
    tick = f"{version} · {sha[:7]}"
    return tick + f"+{label}" if label and not version.endswith(f"+{label}") else tick


def build_hover(*, ref: str, version: str, at: dt.datetime) -> str:
    """What a point's hover says about its build: its date (the build's, never when it was
    measured: docs/pages.md), version, ref."""
    return f"build dated {at:%Y-%m-%d} · torch {version} · {ref}"


def charts_with_values(charts: list[dict], *, machine_class: str) -> tuple[list[dict], list[str]]:
    """The charts that have a value to draw, and a one-line note for each left out (an empty
    chart is an empty pair of axes: "no compiled peak memory (MB) figures on cpu in this range")."""
    def values(chart):
        rows = chart["y"] if "y" in chart else [line["y"] for line in chart["lines"]]
        return any(v is not None for row in rows for v in row)
    kept = [c for c in charts if values(c)]
    notes = [f"no {c['title']} figures on {machine_class} in this range" for c in charts if not values(c)]
    return kept, notes


def overview_trends(*, trend: dict, figures, machine_class: str) -> dict:
    """One line per configuration on each figure's chart; x (build time) and the build refs are
    sent once per configuration and shared by the charts. A configuration measured on one build of
    several is named so in the legend ("· 1 build"); each point names its build by index into
    ``builds`` (ticks), ``refs`` and ``hovers``, and carries its case count; a range of one build draws no chart (a column of
    single dots, one per configuration, is no trend): ``single_build`` names it instead."""
    if len(trend["builds"]) == 1:
        return {"kind": "trends", "machine_class": machine_class, "single_build": trend["builds"][0],
                "configs": len(trend["configs"]), "charts": [], "empty": []}
    series = []
    charts = {f.key: [] for f in figures}
    shown: dict[str, dict] = {}  # each build with a point, by ref: one of its points (tick, ref, hover)
    cases: dict[str, int] = {}  # each build's cases, every configuration shown
    for points in trend["points"].values():
        for p in points:
            shown.setdefault(p["ref"], p)
    order = [ref for ref in trend["builds"] if ref in shown]
    index = {ref: i for i, ref in enumerate(order)}
    for config_id, label in trend["configs"].items():
        points = trend["points"][config_id]
        # Each point by its build's index into the page-wide arrays below (its tick, ref and hover are
        # sent once, not once per configuration: 24 configurations x 91 builds made / 533 kB).
        series.append({
            "name": label + (" · 1 build" if len(points) == 1 and len(trend["builds"]) > 1 else ""),
            "i": [index[p["ref"]] for p in points], "cases": [p["cases"] for p in points],
        })
        for p in points:
            cases[p["ref"]] = cases.get(p["ref"], 0) + p["cases"]
        for f in figures:
            charts[f.key].append([sig(p[f.key]) for p in points])
    return {
        "kind": "trends",
        "machine_class": machine_class,
        "series": series,
        "builds": [build_tick(ref=ref, version=shown[ref]["version"]) for ref in order],
        "refs": order,
        "hovers": [build_hover(ref=ref, version=shown[ref]["version"], at=shown[ref]["at"]) for ref in order],
        # Builds that ran different case sets (3 vs 9 workloads): said above the charts.
        "case_sets": [(ref, cases[ref]) for ref in trend["builds"] if ref in cases] if len(set(cases.values())) > 1 else [],
        **dict(zip(("charts", "empty"), charts_with_values([
            {"id": f"trend-{f.key}", "title": f.label, "percent": f.key == "pass_rate", "y": charts[f.key],
             "unit": axis_title(f.unit)}
            for f in figures
        ], machine_class=machine_class))),
    }


# The workload page's charts: (chart id, title, axis unit); their lines are the metrics that name the
# chart in contract.metrics (``Metric.chart``), in the registry's order.
_CHARTS = (
    ("speedup", "speedup over eager", "x"),
    ("latency", "latency (ms)", "ms"),
    ("compile", "compile time (s)", "s"),
    ("compile-cpu", "compile CPU time over the reference build's, compiled beside it", "x"),
    ("memory", "compiled peak memory (MB)", "MB"),
    ("compression", "memory compression (eager / compiled peak)", "x"),
    ("breaks", "graph breaks and recompiles", ""),
)
# (chart id, title, unit, [(line name, metric, band source)])
SERIES_CHARTS = tuple((chart, title, unit, [(m.line_label, m.name, m.band) for m in chart_lines(chart)])
                      for chart, title, unit in _CHARTS)


def series_trends(*, points, markers, machine_class: str) -> dict:
    """Every metric of one series over builds, with noise bands (speedup: the stored 95% CI as a ratio
    interval, value / (1 + h) .. value x (1 + h), none where it says the point is too noisy to track;
    latencies: the median's interval from the timing samples), regression markers, and on the
    speedup and latency charts the host-bound points measured on a slowed host (``host``)."""
    index = {p.build_id: i for i, p in enumerate(points)}
    slowed = slowed_points([p.host_probe_ms for p in points], [p.compiled_host_share for p in points])
    host = [
        {"i": i, "text": f"host-bound, host {s['slowdown']:.2f}x slower than the builds before "
                         f"(probe {s['after_probe_ms']:.2f} vs {s['before_probe_ms']:.2f} ms)"}
        for i, s in sorted(slowed.items())
    ]
    charts = []
    for chart_id, title, unit, lines in SERIES_CHARTS:
        scale = 1e-6 if unit == "MB" else 1
        if unit == "MB" and any((p.values.get(m) or 0) >= 1e9 for p in points for _, m, _ in lines):
            scale, unit, title = 1e-9, "GB", title.replace("(MB)", "(GB)")  # the unit the tables use: 17.69 GB
        out_lines = []
        for name, metric, band in lines:
            y, low, high = [], [], []
            for p in points:
                value = p.eager_latency_ms if metric == "eager_latency_ms" else p.values.get(metric)
                y.append(sig(value * scale) if value is not None else None)
                lo = hi = None
                if band == "noise" and value is not None and p.speedup_noise is not None \
                        and not too_noisy(sd_of_halfwidth(p.speedup_noise)):  # drawn only where meaningful
                    lo, hi = ratio_interval(value, p.speedup_noise)  # never below 0 (contract.findings)
                elif band == "samples" and metric in p.bands:
                    lo, hi = p.bands[metric]
                low.append(sig(lo))
                high.append(sig(hi))
            line = {"name": name, "y": y}
            if any(v is not None for v in low):
                line["low"], line["high"] = low, high
            # Every run of a build measured more than once, as a dot beside the line (the line is
            # the run stored last), and the pooled run-to-run sd in the legend.
            spread = run_spread(points=points, metric=metric)
            if spread.builds and unit:  # counts: no spread to state
                line["runs"] = {"i": [], "y": []}
                for i, p in enumerate(points):
                    values = [r.get(metric) for r in p.runs if r["status"] == "pass" and r.get(metric) is not None]
                    if len(values) > 1:
                        line["runs"]["i"] += [i] * len(values)
                        line["runs"]["y"] += [sig(v * scale) for v in values]
                line["spread"] = (f"{spread.runs} runs of {spread.builds} build{'s' if spread.builds > 1 else ''}: "
                                  f"run-to-run sd {spread.sd:.1%}" if spread.sd is not None else "")
            out_lines.append(line)
        metrics = [metric for _, metric, _ in lines]
        chart_markers = [  # on the line of the finding's metric (graph breaks or recompiles: the same chart)
            {"i": index[m.build_id], "text": f"{m.kind} {m.status}" + (f" ({m.change_text})" if m.change_text else ""),
             "kind": m.kind, "line": metrics.index(FINDING_METRICS.get(m.metric, m.metric))}
            for m in markers
            if m.build_id in index and FINDING_METRICS.get(m.metric, m.metric) in metrics
        ]
        host_sensitive = any(metric in HOST_SENSITIVE_METRICS for _, metric, _ in lines)
        charts.append({"id": f"series-{chart_id}", "title": title, "unit": axis_title(unit), "lines": out_lines, "markers": chart_markers,
                       "from_zero": unit in ("MB", "GB"),
                       "host": host if host_sensitive else []})
    index_compile = next((i for i, c in enumerate(charts) if c["id"] == "series-compile"), len(charts) - 1)
    charts[index_compile + 1:index_compile + 1] = phase_charts(points, sig=sig, markers=markers)  # beside compile time (docs/explain.md)
    spreads = [f"{c['title']}, {line['name']}: {line['spread']}" for c in charts for line in c["lines"] if line.get("spread")]
    return {
        "kind": "series",
        "spreads": spreads,
        "machine_class": machine_class,
        "x": [build_tick(ref=p.ref, version=p.version) for p in points],
        "hover": [build_hover(ref=p.ref, version=p.version, at=p.at) for p in points],
        "refs": [p.ref for p in points],
        "status": [p.status for p in points],
        **dict(zip(("charts", "empty"), charts_with_values(charts, machine_class=machine_class))),
    }


def dynamic_trends(*, gaps, machine_class: str) -> dict:
    """The unbacked gap of each workload over builds (a heatmap, 1 = no gap, drawn on a log scale
    so that 0.5 and 2 are as far from 1; a case that failed is a cell naming its status) and its
    suite geomean with the compile-time ratio (lines)."""
    builds = gaps.builds
    return {
        "kind": "dynamic",
        "machine_class": machine_class,
        "x": [build_tick(ref=b.ref, version=b.version) for b in builds],
        "hover": [build_hover(ref=b.ref, version=b.version, at=b.at) for b in builds],
        "refs": [b.ref for b in builds],
        "workloads": gaps.workloads,
        "unit": "unbacked / backed (ratio)",
        "z": [[sig(b.gaps[w]) if w in b.gaps else None for b in builds] for w in gaps.workloads],
        "failed": [[b.failed.get(w) for b in builds] for w in gaps.workloads],
        # A gap within its noise or too noisy to track is drawn as no gap (white), its hover says which.
        "quiet": [[b.quiet.get(w) for b in builds] for w in gaps.workloads],
        # Unbacked on some dims against backed on every dim (no backed case of those dims): the hover says so.
        "every_dim": [[w in b.backed_every_dim for b in builds] for w in gaps.workloads],
        "gap": [sig(b.geomean_gap) for b in builds],
        "compile": [sig(b.geomean_compile_ratio) for b in builds],
    }
