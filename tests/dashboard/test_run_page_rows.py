"""The run page's case rows are written in Python (``ptbench.result_rows``, #17: the template loop
spent ~0.5 ms a row, 500 rows a page): the markup must be the loop's, byte for byte, whatever the
cases hold (names and messages to escape, long errors, missing values, host-bound and slowed
cases, odd graph-break records)."""
from __future__ import annotations

import random

import pytest
from django.template import Context, Template
from django.template.defaultfilters import floatformat

from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.results.host import HOST_BOUND_SHARE, HOST_SPEED_MARK_BELOW
from dashboard.results.models import Run
from dashboard.results.selectors.runs import run_results, with_host_speed
from dashboard.web.filters.rows import _fixed, result_rows
from tests.documents import WORKLOADS, host_environment, make_document, make_result

pytestmark = pytest.mark.django_db

# The loop of _results_table.html before the rows moved into result_rows.
TEMPLATE_LOOP = """  {% for r in results %}
    <tr class="status-{{ r.status }}">
      <td><a href="{% url 'web:workload' r.workload.name %}?machine={{ run.machine.machine_class|urlencode }}&amp;mode={{ r.config.case_config.compile_mode|urlencode }}&amp;regime={{ r.config.case_config.shape_regime }}&amp;dtype={{ r.config.case_config.dtype }}">{{ r.workload.name }}</a><div class="implementation">{{ r.implementation|model_name }}</div>{% if r.world_size %}<div class="distributed">{{ r.parallel }} · world size {{ r.world_size }} · {{ r.order }}{% if r.checkpoint == "true" %} · checkpointed{% endif %}</div>{% endif %}</td><td>{{ r.config.case_config.compile_mode }}</td><td>{{ r.config.case_config.shape_regime }}</td><td>{{ r.config.case_config.dtype }}</td>
      <td>{{ r.status }}</td>
      <td class="num">{% if r.speedup %}{{ r.speedup|floatformat:3 }}×{% if r.speedup_noise %} <span class="noise">±{% widthratio r.speedup_noise 1 100 %}%</span>{% endif %}{% if r.compiled_host_share >= host_bound_share %} <span class="host-bound" title="The compiled side kept the GPU waiting for the host: enqueueing took {% widthratio r.compiled_host_share 1 100 %}% of its device time. Its speedup follows the host CPU's speed (compare on one machine), and mode reduce-overhead (CUDA graphs) removes most of this launch overhead.">host-bound</span>{% if r.host_speed is not None and r.host_speed < host_slowed_below %} <span class="host-bound host-slowed" title="While this case was timed the host ran a fixed piece of Python work in {{ r.host_probe_ms|floatformat:2 }} ms, at {% widthratio r.host_speed 1 100 %}% of the speed of this series' fastest run: this speedup is low because the host was slow, not because of the build. Compare runs whose host ran at full speed.">host at {% widthratio r.host_speed 1 100 %}%</span>{% endif %}{% endif %}{% else %}–{% endif %}</td>
      <td class="num">{{ r.compile_time_cold_s|floatformat:2|default:"–" }} / {{ r.compile_time_warm_s|floatformat:2|default:"–" }}</td>
      <td class="num" title="{% for b in r.graph_breaks %}{{ b.reason }} @ {{ b.location }}&#10;{% endfor %}">{{ r.graph_break_count|default_if_none:"–" }}</td>
      <td class="num" title="{% for c in r.recompiles %}{{ c.reason }}&#10;{% endfor %}">{{ r.recompile_count|default_if_none:"–" }}</td>
      <td class="repro-cell">{% if r.repro %}<code class="repro" id="repro-{{ r.id }}">{% for word in r.repro.split %}<span>{{ word }}</span>{% if not forloop.last %} {% endif %}{% endfor %}</code> <button type="button" class="copy" data-copy="#repro-{{ r.id }}" hidden>copy</button>{% endif %}</td>
    </tr>
    {% if r.error %}<tr class="error-row"><td colspan="10"><pre class="error-excerpt">{{ r.error.type }}: {{ r.error.message|truncatechars:600 }}</pre></td></tr>{% endif %}
  {% endfor %}"""


def tricky_runs() -> list[Run]:
    evil = '<script>alert("x & y")</script>'
    workloads = [dict(WORKLOADS[0], name=evil), *WORKLOADS]
    fast = make_document(results=[make_result(w["name"], regime) for w in WORKLOADS for regime in ("static", "backed")])
    slow = make_document(git_sha="d" * 40, results=[
        make_result(evil, "static", speedup=1.23456, speedup_noise=0.0149),
        make_result("mlp_loop", "static", status="compile_error", speedup=None, compile_time_cold_s=None, compile_time_warm_s=None,
                    graph_break_count=None, recompile_count=None),
        make_result("mlp_loop", "backed", speedup=2.0005, compile_time_cold_s=10.005, speedup_noise=0.0),
        make_result("resnet_train", "static", speedup=0.9994999),
        make_result("resnet_train", "backed", status="timeout", speedup=None),
    ])
    slow["workloads"] = workloads
    slow["results"][1]["error"] = {"type": "torch._inductor.exc.<InductorError>", "message": "<b>boom</b> & " + "x" * 700}
    slow["results"][4]["error"] = {"type": "TimeoutError", "message": ""}
    slow["results"][0]["graph_breaks"] = [{"reason": 'say "hi" <now>', "location": "m.py:1", "count": 1}, {"reason": "no location", "count": 2}]
    slow["results"][0]["recompiles"] = [{"reason": "size & shape", "count": 1}]
    shares = {(evil, "static"): 0.99, ("mlp_loop", "backed"): 0.95, ("resnet_train", "static"): 0.30}  # host-bound from 0.9
    for document, probe_ms in ((fast, 0.9), (slow, 1.8)):  # the second run's host at half speed
        for result in document["results"]:
            share = shares.get((result["workload"], result["config"]["shape_regime"]))
            if share:
                result["environment"] = host_environment(share, probe_ms)
    # The model that ran (the runner's environment.implementation): ours, a library's, one to escape, none.
    slow["results"][0].setdefault("environment", {})["implementation"] = "transformers.<Bert>Model & co"
    slow["results"][2].setdefault("environment", {})["implementation"] = "workloads.suite.mlp_loop.MLPLoop"
    # A distributed case (docs/distributed.md): its wrapper, world size, order and checkpointing under the name.
    slow["results"][3].setdefault("environment", {})["distributed"] = {"parallel": "fsdp", "world_size": 2,
                                                                      "order": "compile-then-wrap", "checkpoint": True}
    for document in (fast, slow):
        run_ingest_and_detect(document=document)
    return [Run.objects.select_related("machine").get(pk=d["run"]["id"]) for d in (fast, slow)]


def test_the_rows_are_the_template_loops_to_the_byte():
    loop = Template("{% load ptbench %}" + TEMPLATE_LOOP)
    written = {}
    for run in tricky_runs():
        for only in ("all", "failed"):
            results = with_host_speed(run_results(run=run, only=only))
            expected = loop.render(Context({"results": results, "run": run, "host_bound_share": HOST_BOUND_SHARE,
                                            "host_slowed_below": HOST_SPEED_MARK_BELOW}))
            written[only] = result_rows(results, run.machine.machine_class, HOST_BOUND_SHARE, HOST_SPEED_MARK_BELOW)
            assert "  " + written[only] == expected  # _results_table.html: "  {% result_rows ... %}"
    slow = written["all"]  # the second run's: what the rows had to get right was there
    assert "&lt;script&gt;alert(&quot;x &amp; y&quot;)&lt;/script&gt;" in slow and "&amp; " + "x" * 585 + "…</pre>" in slow
    assert '<code title="transformers.&lt;Bert&gt;Model &amp; co">transformers.<wbr>&lt;Bert&gt;Model &amp; co</code>' in slow
    assert '<code title="workloads.suite.mlp_loop.MLPLoop">MLPLoop</code> <span class="meta">ours</span>' in slow
    assert "<code>–</code>" in slow
    assert '<div class="distributed">fsdp · world size 2 · compile-then-wrap · checkpointed</div>' in slow
    assert slow.count('class="distributed"') == 1  # single-process cases say nothing of it
    assert "host at 50%" in slow and "2.001×" in slow and "0.999×" in slow and "10.01 / 1.50" in slow  # half up, as floatformat


def test_fixed_decimals_round_as_floatformat_does():
    rng = random.Random(7)
    values = [0.0, -0.0, 1.0005, 2.675, 1.005, 0.125, -0.0004, -0.0005, 9.9995, 1e-05, 123456789.12345, 1e20, float("nan"), None]
    values += [rng.uniform(-10, 10) for _ in range(3000)] + [round(rng.uniform(0, 5), rng.randint(1, 6)) for _ in range(3000)]
    for places in (2, 3):
        assert [_fixed(v, places) for v in values] == [str(floatformat(v, places)) for v in values]
