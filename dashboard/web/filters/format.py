"""Formatting for the pages: metric values with their units, changes, build refs, query strings, the
compare and A/B pages' cells."""
from __future__ import annotations

import html
import math
import re
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from contract.colour_reasons import FROM_PRIOR, FROM_REPEATS, POOLED, VARIANT_BETTER, VARIANT_SHORT, not_finding
from contract.findings import BETTER, TOO_NOISY, TOO_NOISY_SD, WITHIN_NOISE, WORSE
from dashboard.results.formatting import metric_format
from dashboard.results.selectors.builds import build_label_on
from dashboard.results.selectors.common import build_ref as _build_ref
from dashboard.results.variants import base_of, overrides_stored


register = template.Library()


metric = register.filter("metric", metric_format)  # the formatting is results' (alerts use it too)


CHANGE_COMPACT_FROM = 1e6  # a change shown in percent (or a count) this large is written with an exponent


_TONES = {WORSE: "worse", BETTER: "better", WITHIN_NOISE: "same", TOO_NOISY: "same too-noisy"}


_PATH_PHASES = ("export_s", "package_s", "load_s", "first_call_s")  # in the order they run (run document schema)


@register.filter
def path_phases(phases) -> list[tuple[str, object]]:
    """A result's ``path_phases`` in the order they run, each as (word, seconds): ``first_call_s``
    -> ``first call`` (docs/compile-paths.md). The stored JSON keeps no order."""
    phases = phases if isinstance(phases, dict) else {}
    return [(name.removesuffix("_s").replace("_", " "), phases[name]) for name in _PATH_PHASES if name in phases]


@register.filter
def path_facts(environment) -> list[str]:
    """What a compile path found (a result's ``environment.compile_path``, docs/compile-paths.md), as
    phrases: its dynamic shapes, unbacked symbols and guards, each where recorded."""
    path = environment.get("compile_path") if isinstance(environment, dict) else None
    if not isinstance(path, dict):
        return []
    guards = path.get("guards") if path.get("guards") is not None else path.get("export_guards")
    facts = [(label, value) for label, value in (("dynamic shapes", path.get("dynamic_shapes")),
                                                  ("unbacked symbols", path.get("unbacked_symbols")), ("guards", guards))]
    return [f"{label} {value}" for label, value in facts if value is not None]


@register.filter
def tone(direction: str) -> str:
    """The CSS classes of a change's word (``contract.findings.judge``): red, green, or grey for a
    change within noise and for a series too noisy to track."""
    return _TONES.get(direction, "")


@register.filter
def change(value, kind: str = "relative") -> str:
    """A change: relative ``+3.1%``, in percentage points ``+2.0 pp``, or a count ``+2``."""
    if value is None:
        return ""
    try:
        value = float(value)  # jsonb gives 1.7e308 back as a 309-digit integer, past float range
    except (OverflowError, TypeError, ValueError):
        value = math.inf if isinstance(value, int) and value > 0 else -math.inf if isinstance(value, int) else math.nan
    shown = value if kind == "count" else value * 100
    if not math.isfinite(shown):
        return "" if math.isnan(shown) else ("+∞" if shown > 0 else "−∞")
    huge = abs(shown) >= CHANGE_COMPACT_FROM  # +5e+302%, not three hundred digits across the table
    if kind == "points":
        return f"{shown:+.3g} pp" if huge else f"{shown:+.1f} pp"
    if kind == "count":
        return f"{shown:+.3g}" if huge else f"{shown:+,.0f}"
    return f"{shown:+.3g}%" if huge else f"{shown:+.1f}%"


_BREAK_AFTER = re.compile(r"(?<=[/._+])")


@register.filter
def breakable(value) -> str:
    """``value`` escaped, with a line-break opportunity (``<wbr>``) after each slash, dot, underscore
    and plus: a configuration, a metric, a workload or a build ref wraps there in a narrow column
    instead of widening its table past the window."""
    return mark_safe("<wbr>".join(escape(part) for part in _BREAK_AFTER.split(str(value))))


OURS = "workloads."  # the prefix of our own workload modules' classes (the runner's environment.implementation)


@register.filter
def model_name(implementation) -> str:
    """The model that ran, narrow: ours as its class name and "ours", a library's as its dotted
    name (``transformers.LlamaForCausalLM``), the full path in the title; '–' where not recorded."""
    if not implementation:
        return mark_safe("<code>–</code>")
    text = str(implementation)
    if text.startswith(OURS):
        shown = f'{escape(text.rpartition(".")[2])}</code> <span class="meta">ours</span>'
    else:
        shown = f"{breakable(text)}</code>"
    return mark_safe(f'<code title="{escape(text)}">{shown}')


@register.filter
def slower_by(ratio) -> str:
    """A speed ratio below 1 as "how many times slower": 0.123 -> ``8.1x``."""
    return f"{1 / ratio:.1f}x" if ratio else "–"


@register.filter
def shown(value) -> str:
    """A before/after value: a number to 4 significant digits, a status as it is, None as "–"."""
    if value is None or value == "":
        return "–"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.4g}"
    return str(value)


@register.filter
def build_ref(build) -> str:
    return _build_ref(build)


@register.filter
def build_on(build, machine_class) -> str:
    """The build as its figures on ``machine_class`` name it: an imported build by that class's hosts
    and days, the same on every page (``selectors.builds.build_label_on``; the overview's too)."""
    return build_label_on(build=build, machine_class=machine_class) if build is not None and machine_class else str(build or "")


@register.filter
def overrides(build) -> str:
    """A variant build's overrides in one line (empty for a plain build)."""
    return overrides_stored(build).summary() if getattr(build, "overrides", None) else ""


@register.simple_tag
def variant_badge(build) -> str:
    """After a build's name, for a variant: its overrides and a link to its A/B page against its base
    build (no link when its base is not stored: that page would have nothing to compare); else nothing."""
    summary = overrides(build)
    if not summary:
        return ""
    base = base_of(build)
    link = ""
    if base is not None:
        url = f"{reverse('web:ab')}?{urlencode({'base': _build_ref(base), 'variant': _build_ref(build)})}"
        link = f' <a class="ab-link" href="{escape(url)}">A/B against its base</a>'
    else:
        link = ' <span class="meta ab-no-base">(its base build is not stored)</span>'
    return mark_safe(f' <span class="variant-badge" title="a build variant">variant</span> <code class="overrides">'
                     f'{escape(summary)}</code>{link}')


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


@register.filter
def value_of(result, metric):
    """A result's value of a metric of the registry (``contract.metrics.Metric``): ``r|value_of:m``."""
    return getattr(result, metric.name, None)


@register.simple_tag(takes_context=True)
def qs(context, **changes) -> str:
    """This page's query string with some parameters replaced (None or "" removes one); the
    ``page`` parameter is dropped unless given, as any other change starts a new listing."""
    params = context["request"].GET.copy()
    params.pop("page", None)
    for key, value in changes.items():
        params.pop(key, None)
        if value not in (None, ""):
            params[key] = value
    encoded = urlencode(sorted((k, v) for k in params for v in params.getlist(k)))
    return f"?{encoded}" if encoded else "?"


@register.simple_tag(takes_context=True)
def config_qs(context, config, **changes) -> str:
    """``qs`` picking a stored configuration (its ``CaseConfig.page_parameters``: mode, regime, dtype)."""
    return qs(context, **config.case_config.page_parameters(), **changes)


@register.filter
def config_query(config) -> str:
    """``mode=…&amp;regime=…&amp;dtype=…``: the query parameters that pick a stored configuration."""
    return mark_safe(escape(urlencode(config.case_config.page_parameters())))


@register.simple_tag
def change_cells(changes: dict, metrics, pooled: bool = False) -> str:
    """One ``<td>`` per metric: ``old → new`` and the relative change, coloured by its tone (grey
    and "within noise" when a timed change is inside its noise, grey and "too noisy to track"
    when the series' noise is past the bound and the change is not past even that; "reference
    changed", no change, when compile_cpu_ratio was measured against two compile references). A
    coloured change links its finding or says in its tooltip why it is none; a timed change judged
    by the class's prior says so (``contract.colour_reasons``; ``pooled``: a geomean row)."""
    cells = []
    for m in metrics:
        c = changes[m.name]
        delta = f' <span class="delta">{change(c.change)}</span>' if c.change else ""
        if c.tone == "same":
            delta += ' <span class="verdict">within noise</span>'
        elif c.tone == "too_noisy":  # contract.findings: the series' noise is past the bound
            delta += (f' <span class="verdict" title="run-to-run sd past {TOO_NOISY_SD:.0%} and the change within it: '
                      'no colour, no finding">too noisy to track</span>')
        elif c.tone == "reference_changed":  # two compile references: no change to show (results.compile_reference)
            delta = ' <span class="verdict" title="measured against different compile references: not compared">reference changed</span>'
        title = _cell_title(c, pooled)
        finding = getattr(c, "finding", None)
        if finding:  # the finding detection stored for this case and metric between the two builds
            delta += (f' <a class="finding-link" href="{reverse("regressions:detail", args=[finding])}">'
                      f'finding {finding}</a>')
        cells.append(  # html.escape: Django's escape of a str, without its lazy-string wrapper (/compare/: 3,600 a page)
            f'<td class="num {c.tone}" data-metric="{m.name}"{title}>{html.escape(metric(c.old, m.unit))} → '
            f'{html.escape(metric(c.new, m.unit))}{delta}</td>'
        )
    return mark_safe("".join(cells))


def _cell_title(c, pooled: bool) -> str:
    """A compare cell's tooltip: why a coloured change is no finding, and whose noise it was judged by."""
    words = []
    if c.tone in ("worse", "better") and not getattr(c, "finding", None):
        words.append(not_finding(POOLED) if pooled else getattr(c, "reason", ""))
    if c.noise is not None and c.change is not None and not pooled:
        source = FROM_PRIOR if getattr(c, "borrowed", False) else FROM_REPEATS
        words.append(f"judged against ±{c.noise * 100:.1f}%: {source}")
    words = [w for w in words if w]
    return f' title="{html.escape("; ".join(words))}"' if words else ""


@register.simple_tag
def ab_cells(cells: dict, metrics, pooled: bool = False) -> str:
    """The A/B page's cells: ``base → variant``, then the change next to its noise, or "no change"
    (grey) when it is within the noise; counts change by any difference. A case's cell shows its
    stored finding (linked) or says a change past its band is not one; ``pooled`` (a geomean row,
    never a finding itself) says neither."""
    out = []
    for m in metrics:
        c = cells[m.name]
        if c.base is None and c.variant is None:
            words = (f'<span class="verdict" title="every case is too noisy to track">{TOO_NOISY}</span>'
                     if c.tone == "too_noisy" else "–")
            out.append(f'<td class="num ab {c.tone}" data-metric="{m.name}" data-tone="{c.tone}">{words}</td>')
            continue
        values = f"{escape(metric(c.base, m.unit))} → {escape(metric(c.variant, m.unit))}"
        if c.change is None:
            verdict = ""
        elif c.tone == "same":
            verdict = '<span class="verdict">no change</span>'
        elif c.tone == "too_noisy":  # contract.findings: the series' noise is past the bound
            verdict = f'<span class="verdict" title="run-to-run sd past {TOO_NOISY_SD:.0%}">{TOO_NOISY}</span>'
        else:
            verdict = f'<span class="delta">{change(c.change, "count" if c.noise is None else "relative")}</span>'
        noise = f' <span class="noise">±{c.noise * 100:.1f}%</span>' if c.noise is not None and c.change is not None else ""
        found = getattr(c, "finding", None)
        if found:  # the stored finding's numbers, linked: the same on /regressions/ and in the verdict (issue #42)
            values = escape(found["values"])
            verdict = (f'<a class="finding-link" href="{reverse("regressions:detail", args=[found["id"]])}">'
                       f'finding {found["id"]}</a> <span class="delta">{escape(found["text"])}</span>')
            noise = f' <span class="noise">±{found["noise"] * 100:.1f}%</span>' if found["noise"] is not None else ""
        elif c.tone == WORSE and c.noise is not None and not pooled:  # past the band, yet the verdict made no finding of it
            verdict += f' <span class="not-finding" title="{escape(VARIANT_SHORT)}">not a finding</span>'
        title = ""
        if not found and c.tone in (WORSE, BETTER):  # one judgement behind every colour (contract.colour_reasons)
            title = f' title="{escape(not_finding(POOLED if pooled else VARIANT_SHORT if c.tone == WORSE else VARIANT_BETTER))}"'
        finding_id = f' data-finding="{found["id"]}"' if found else ""
        out.append(f'<td class="num ab {c.tone}" data-metric="{m.name}" data-tone="{c.tone}"{finding_id}{title}>{values}'
                   f'<div class="ab-change">{verdict}{noise}</div></td>')
    return mark_safe("".join(out))


@register.simple_tag
def build_options(summaries, selected_id=None, *, blank: str = "") -> str:
    """``<option>``s for a build picker: value = the build's ref, text = ref · date · label."""
    out = [f'<option value="">{escape(blank)}</option>'] if blank else []
    for s in summaries:
        ref = _build_ref(s.build)
        shown = build_label_on(build=s.build, machine_class=s.machine_class) if s.build.label else ""
        label = f" · {shown}" if shown else ""  # an imported build by the class's hosts, as its block names it
        label += f" · {overrides(s.build)}" if s.build.overrides else ""
        selected = " selected" if s.build_id == selected_id else ""
        out.append(f'<option value="{escape(ref)}"{selected}>{escape(ref)} · {s.ordered_at:%Y-%m-%d}{escape(label)}</option>')
    return mark_safe("".join(out))


@register.simple_tag
def figure_cell(cell, common: int) -> str:
    """An overview cell: the latest build's figure, its change against the previous build over the
    ``common`` cases present in both (hover: both values), coloured by ``cell.tone``."""
    f = cell.figure
    title = ""
    if cell.old is not None:
        title = (f' title="{escape(f.label)} over the {common} cases in both builds: '
                 f'{escape(metric(cell.old, f.unit))} → {escape(metric(cell.new, f.unit))}"')
    delta = f' <span class="delta">{change(cell.change, f.change_kind)}</span>' if cell.change else ""
    if cell.tone.split(" ")[0] in ("worse", "better"):  # a row over cases is no finding itself (contract.colour_reasons)
        title = title[:-1] + f'; {escape(not_finding(POOLED))}"' if title else f' title="{escape(not_finding(POOLED))}"'
    if cell.tone == "same":  # past the threshold, not past the cases' noise (docs/noise-and-findings.md)
        delta += ' <span class="verdict">within noise</span>'
    elif cell.tone == "too_noisy":
        delta += f' <span class="verdict" title="run-to-run sd past {TOO_NOISY_SD:.0%} in every case">{TOO_NOISY}</span>'
    return mark_safe(f'<td class="num cell {cell.tone}"{title}>{escape(metric(cell.value, f.unit))}{delta}</td>')
