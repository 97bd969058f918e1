"""Formatting for the pages: metric values with their units, changes, build refs, query strings."""
from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboard.results.formatting import metric_format
from dashboard.results.selectors.common import build_ref as _build_ref
from dashboard.results.variants import overrides_stored

register = template.Library()


metric = register.filter("metric", metric_format)  # the formatting is results' (alerts use it too)


@register.filter
def change(value, kind: str = "relative") -> str:
    """A change: relative ``+3.1%``, in percentage points ``+2.0 pp``, or a count ``+2``."""
    if value is None:
        return ""
    if kind == "points":
        return f"{value * 100:+.1f} pp"
    if kind == "count":
        return f"{value:+,.0f}"
    return f"{value * 100:+.1f}%"


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
def overrides(build) -> str:
    """A variant build's overrides in one line (empty for a plain build)."""
    return overrides_stored(build).summary() if getattr(build, "overrides", None) else ""


@register.simple_tag
def variant_badge(build) -> str:
    """After a build's name, for a variant: its overrides and a link to its A/B page; else nothing."""
    summary = overrides(build)
    if not summary:
        return ""
    url = f"{reverse('web:ab')}?{urlencode({'variant': _build_ref(build)})}"
    return mark_safe(f' <span class="variant-badge" title="a build variant">variant</span> <code class="overrides">'
                     f'{escape(summary)}</code> <a class="ab-link" href="{escape(url)}">A/B against its base</a>')


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


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


# --- Rendered in Python: the long repetitive parts of the compare and dynamic pages ----------------
# (a few hundred table cells or <option>s each; Django's template engine would spend most of the
# page's server time on them).


@register.simple_tag
def change_cells(changes: dict, metrics) -> str:
    """One ``<td>`` per metric: ``old → new`` and the relative change, coloured by its tone (grey
    and "within noise" when a timed change is inside its series' noise)."""
    cells = []
    for m in metrics:
        c = changes[m.name]
        delta = f' <span class="delta">{change(c.change)}</span>' if c.change else ""
        if c.tone == "same":
            delta += ' <span class="verdict">within noise</span>'
        cells.append(
            f'<td class="num {c.tone}" data-metric="{m.name}">{escape(metric(c.old, m.unit))} → {escape(metric(c.new, m.unit))}{delta}</td>'
        )
    return mark_safe("".join(cells))


@register.simple_tag
def ab_cells(cells: dict, metrics) -> str:
    """The A/B page's cells: ``base → variant``, then the change next to its noise, or "no change"
    (grey) when it is within the noise; counts change by any difference."""
    out = []
    for m in metrics:
        c = cells[m.name]
        if c.base is None and c.variant is None:
            out.append(f'<td class="num ab" data-metric="{m.name}">–</td>')
            continue
        values = f"{escape(metric(c.base, m.unit))} → {escape(metric(c.variant, m.unit))}"
        if c.change is None:
            verdict = ""
        elif c.tone == "same":
            verdict = '<span class="verdict">no change</span>'
        else:
            verdict = f'<span class="delta">{change(c.change, "count" if c.noise is None else "relative")}</span>'
        noise = f' <span class="noise">±{c.noise * 100:.1f}%</span>' if c.noise is not None and c.change is not None else ""
        out.append(f'<td class="num ab {c.tone}" data-metric="{m.name}" data-tone="{c.tone}">{values}'
                   f'<div class="ab-change">{verdict}{noise}</div></td>')
    return mark_safe("".join(out))


@register.simple_tag
def build_options(summaries, selected_id=None, *, blank: str = "") -> str:
    """``<option>``s for a build picker: value = the build's ref, text = ref · date · label."""
    out = [f'<option value="">{escape(blank)}</option>'] if blank else []
    for s in summaries:
        ref = _build_ref(s.build)
        label = f" · {s.build.label}" if s.build.label else ""
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
    return mark_safe(f'<td class="num cell {cell.tone}"{title}>{escape(metric(cell.value, f.unit))}{delta}</td>')
