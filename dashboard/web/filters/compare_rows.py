"""/compare/'s case rows, built in Python: the markup its template's ``{% for %}`` wrote, to the byte,
without the template language's per-row lookups and ``{% url %}`` tags (~1.5 ms a row of the 200 a
page shows, a third of a cold /compare/ at 1,000,000 results besides judging)."""
from __future__ import annotations

from django.template.defaultfilters import urlencode as urlencode_filter
from django.urls import reverse
from django.utils.safestring import mark_safe

from dashboard.web.filters.format import change_cells, config_query, register
from dashboard.web.filters.rows import _text

EXPLAIN_TITLE = "compile phases, kernels, graph breaks and environments of the two builds"
_BEFORE, _AFTER = 918273645501, 918273645502  # placeholder ids of web:explain's path (digits no other part of it has)


@register.simple_tag
def compare_rows(rows, machine_class: str, metric_name: str, columns, colspan: int) -> str:
    """Each row of ``compare.html``'s table (``CompareRow``), or the one row saying none matches."""
    if not rows:
        return mark_safe(f'<tr><td colspan="{_text(colspan)}">no case matches this filter</td></tr>\n  ')
    machine = urlencode_filter(machine_class)
    urls: dict[str, str] = {}
    queries: dict[int, str] = {}  # a configuration's query, once per configuration (by its object)
    explain = _text(reverse("web:explain", args=[_BEFORE, _AFTER]))  # one reverse a page: the ids put in below
    out = []
    for r in rows:
        if r.workload not in urls:
            urls[r.workload] = _text(reverse("web:workload", args=[r.workload]))
        key = id(r.cfg)
        if key not in queries:
            queries[key] = config_query(r.cfg)
        changed = r.base_status != r.head_status
        tone = ("better" if r.head_status == "pass" else "worse") if changed else ""
        title = f' title="{_text(r.status_reason)}"' if r.status_reason else ""
        status = f"{_text(r.base_status)} → {_text(r.head_status)}" if changed else _text(r.head_status)
        if r.status_finding:
            status += (f' <a class="finding-link" href="{_text(reverse("regressions:detail", args=[r.status_finding]))}">'
                       f'finding {_text(r.status_finding)}</a>')
        if r.base_result_id and r.head_result_id:
            href = explain.replace(str(_BEFORE), str(r.base_result_id)).replace(str(_AFTER), str(r.head_result_id))
            status += (f' <a class="explain-link" href="{href}?metric={_text(metric_name)}" title="{EXPLAIN_TITLE}">'
                       f'what changed</a>')
        out.append(
            f'\n    <tr class="case{"".join(f" {_text(f)}" for f in r.flags)}" data-base="{_text(r.base_result_id)}" '
            f'data-head="{_text(r.head_result_id)}">\n'
            f'      <td><a href="{urls[r.workload]}?machine={machine}&amp;{queries[key]}">{_text(r.workload)}</a></td>\n'
            f'      <td>{_text(r.config)}</td>\n'
            f'      <td class="{tone}"{title}>{status}</td>\n'
            f'      {change_cells(r.changes, columns)}\n'
            f'    </tr>\n  '
        )
    return mark_safe("".join(out))
