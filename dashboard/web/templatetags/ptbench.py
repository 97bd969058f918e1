"""Formatting for the pages: metric values with their units, changes, build refs, query strings."""
from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboard.results.selectors.common import build_ref as _build_ref

register = template.Library()


@register.filter
def metric(value, unit: str = "") -> str:
    """A metric value with its unit: ``1.234×``, ``12.3 ms``, ``7.51 s``, ``1.20 GB``, ``3``."""
    if value is None or value == "":
        return "–"
    if unit == "x":
        return f"{value:.3f}×"
    if unit == "ms":
        return f"{value:.3g} ms" if value < 1000 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "bytes":
        for size, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(value) >= size:
                return f"{value / size:.2f} {name}"
        return f"{value:.0f} B"
    if unit == "rate":
        return f"{value * 100:.1f}%"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3g}"
    return f"{value:,.0f}"


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
    """One ``<td>`` per metric: ``old → new`` and the relative change, coloured by its tone."""
    cells = []
    for m in metrics:
        c = changes[m.name]
        delta = f' <span class="delta">{change(c.change)}</span>' if c.change else ""
        cells.append(
            f'<td class="num {c.tone}" data-metric="{m.name}">{escape(metric(c.old, m.unit))} → {escape(metric(c.new, m.unit))}{delta}</td>'
        )
    return mark_safe("".join(cells))


@register.simple_tag
def build_options(summaries, selected_id=None, *, blank: str = "") -> str:
    """``<option>``s for a build picker: value = the build's ref, text = ref · date · label."""
    out = [f'<option value="">{escape(blank)}</option>'] if blank else []
    for s in summaries:
        ref = _build_ref(s.build)
        label = f" · {s.build.label}" if s.build.label else ""
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
