"""/compare/'s case rows are written in Python (``ptbench.compare_rows``, #46 item 13: the template
loop spent ~1.5 ms a row, 200 rows a page): the markup must be the loop's, byte for byte, whatever
the rows hold (names and reasons to escape, status changes with and without a finding, a missing
result on one side, every flag, no row at all)."""
from __future__ import annotations

import pytest
from django.template import Context, Template

from contract.case_config import CaseConfig
from dashboard.results.selectors.common import METRICS, METRICS_BY_NAME
from dashboard.results.selectors.compare import Change, CompareRow
from dashboard.results.services import config_get_or_create
from dashboard.web.filters.compare_rows import compare_rows

pytestmark = pytest.mark.django_db

# The loop of compare.html before the rows moved into compare_rows.
TEMPLATE_LOOP = """{% load ptbench %}{% for r in rows %}
    <tr class="case{% for f in r.flags %} {{ f }}{% endfor %}" data-base="{{ r.base_result_id }}" data-head="{{ r.head_result_id }}">
      <td><a href="{% url 'web:workload' r.workload %}?machine={{ machine_class|urlencode }}&amp;{{ r.cfg|config_query }}">{{ r.workload }}</a></td>
      <td>{{ r.config }}</td>
      <td class="{% if r.base_status != r.head_status %}{% if r.head_status == "pass" %}better{% else %}worse{% endif %}{% endif %}"{% if r.status_reason %} title="{{ r.status_reason }}"{% endif %}>{% if r.base_status == r.head_status %}{{ r.head_status }}{% else %}{{ r.base_status }} → {{ r.head_status }}{% endif %}{% if r.status_finding %} <a class="finding-link" href="{% url 'regressions:detail' r.status_finding %}">finding {{ r.status_finding }}</a>{% endif %}{% if r.base_result_id and r.head_result_id %} <a class="explain-link" href="{% url 'web:explain' r.base_result_id r.head_result_id %}?metric={{ metric.name }}" title="compile phases, kernels, graph breaks and environments of the two builds">what changed</a>{% endif %}</td>
      {% change_cells r.changes columns %}
    </tr>
  {% empty %}<tr><td colspan="{{ sort_columns|length }}">no case matches this filter</td></tr>
  {% endfor %}"""


def rows() -> list[CompareRow]:
    cfg = config_get_or_create(case=CaseConfig("max-autotune", "unbacked", "bfloat16", device="cuda"))
    changes = {m.name: Change(1.5, 1.2, -0.2, "worse", 0.03, finding=7 if m.name == "speedup" else None,
                              reason='not a finding: "quoted" & <odd>') for m in METRICS}
    evil = '<script>alert("x & y")</script>/a b'
    return [
        CompareRow(1, evil, "max-autotune · unbacked · <bf16>", "pass", "compile_error", 12345, 67890, changes, cfg,
                   flags={"new_failures", "regressed"}, status_reason='not a finding: a "young" series'),
        CompareRow(2, "resnet", "default", "timeout", "pass", 11, 12, changes, cfg, flags={"improved"}, status_finding=42),
        CompareRow(3, "bert", "default", "pass", "pass", 0, 13, changes, cfg),  # no base result: no "what changed"
        CompareRow(4, "llama", "default", "pass", "pass", 1_000_000, 2_000_000, changes, cfg, flags={"new_graph_breaks"}),
    ]


@pytest.mark.parametrize("case", ["rows", "none"])
def test_compare_rows_write_the_template_loop_byte_for_byte(case):
    shown = rows() if case == "rows" else []
    columns = [METRICS_BY_NAME["speedup"], METRICS[-1]]
    context = {"rows": shown, "machine_class": "gpu a&b/c", "metric": METRICS_BY_NAME["speedup"], "columns": columns,
               "sort_columns": [("workload", "workload", False)] * 5}
    expected = Template(TEMPLATE_LOOP).render(Context(context))
    written = compare_rows(shown, "gpu a&b/c", "speedup", columns, 5)
    assert written == expected
    assert ("no case matches this filter" in written) == (case == "none")
