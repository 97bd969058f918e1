"""One comparison engine (issue #34): /compare/ (page and API) and the A/B page select one pair of
builds' cases and judge them alike: the same figure and the same tone for one pair."""
from __future__ import annotations

import re

import pytest

from contract.variants import Overrides, variant_label
from dashboard.regressions.ab import ab_compare
from dashboard.regressions.compare import builds_compare_judged
from dashboard.results.models import Build
from dashboard.results.selectors.common import build_ref
from dashboard.results.selectors.compare import compare_summary
from dashboard.results.services import run_ingest
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
CDT = Overrides.build({"inductor.coordinate_descent_tuning": True})


def _pair() -> tuple[Build, Build]:
    base = [make_result("mlp_loop", r, speedup=1.0, speedup_noise=0.005, compile_time_cold_s=10.0) for r in ("static", "backed")]
    # speedup +30 %: past /compare/'s 5 % and every band; compile cold +2 %: within both; one more graph break.
    variant = [make_result("mlp_loop", r, speedup=1.3, speedup_noise=0.005, compile_time_cold_s=10.2, graph_break_count=2)
               for r in ("static", "backed")]
    run_ingest(document=make_document(results=base))
    document = make_document(results=variant)
    document["build"].update(overrides=CDT.as_document(), local_label=variant_label("", CDT))
    run_ingest(document=document)
    return Build.objects.get(local_label=""), Build.objects.exclude(local_label="").get()


def _cell(html: str, tag_class: str, metric: str) -> tuple[str, str]:
    """(its tone class, its change as written) of the first cell of ``metric`` in the table of ``tag_class``."""
    found = re.search(rf'<td class="num {tag_class}([^"]*)" data-metric="{metric}"[^>]*>(.*?)</td>', html, re.S)
    assert found, metric
    delta = re.search(r'class="delta">([^<]*)<', found.group(2))
    return found.group(1).strip(), delta.group(1) if delta else ""


def test_compare_and_ab_give_one_figure_and_tone_for_one_pair(client):
    base, variant = _pair()
    compared = builds_compare_judged(base=base, head=variant, machine_class="cpu")
    ab = ab_compare(base=base, variant=variant, machine_class="cpu")
    assert [(r.workload, r.config) for r in compared.rows] == [(r.workload, r.config) for r in ab.rows]
    for row, ab_row in zip(compared.rows, ab.rows):
        for metric in ("speedup", "compile_time_cold_s"):
            c, a = row.changes[metric], ab_row.cells[metric]
            assert (c.old, c.new, c.change, c.noise, c.tone) == (a.base, a.variant, a.change, a.noise, a.tone)
        assert row.changes["speedup"].tone == "better" and row.changes["compile_time_cold_s"].tone == "same"
        assert (row.changes["graph_break_count"].tone, ab_row.cells["graph_break_count"].tone) == ("worse", "worse")
    geomean = compare_summary(rows=[r for r in compared.rows if r.config == ab.geomeans[0].config])
    for metric in ("speedup", "compile_time_cold_s"):
        c, a = geomean[metric], ab.geomeans[0].cells[metric]
        assert (c.old, c.new, c.change, c.tone) == (pytest.approx(a.base), pytest.approx(a.variant), pytest.approx(a.change), a.tone)

    # The pages and the API say the same.
    compare_page = client.get(f"/compare/?machine=cpu&base={build_ref(base)}&head={build_ref(variant)}").content.decode()
    ab_page = client.get(f"/ab/?base={build_ref(base)}&variant={build_ref(variant)}").content.decode()
    api = client.get(f"/api/v1/compare/?machine_class=cpu&base={build_ref(base)}&head={build_ref(variant)}").json()
    assert _cell(compare_page, "", "speedup") == ("better", "+30.0%") == _cell(ab_page, "ab ", "speedup")
    assert _cell(compare_page, "", "compile_time_cold_s")[0] == "same" == _cell(ab_page, "ab ", "compile_time_cold_s")[0]
    assert [(r["changes"]["speedup"]["change"], r["changes"]["speedup"]["tone"]) for r in api["results"]] == [
        (pytest.approx(0.3), "better")] * 2


def test_a_cases_own_sd_is_max_of_its_repeated_runs_and_both_stated_intervals_in_that_order():
    # pairs.own_sd without max() over a list (/compare/ 1,920 cases x 7 timed metrics, issue #46 item 13): the
    # value max() gives in the same order (repeated runs, base's interval, head's), a NaN of the runs kept first.
    from contract.comparison import repeat_sd
    from contract.findings import BLOCK_TIMED_METRICS, sd_of_halfwidth
    from dashboard.results.selectors.pairs import own_sd

    runs = ({}, {"speedup": [1.0, 1.1], "compile_time_cold_s": [9.0, 12.0]}, {"speedup": [1.0, float("inf")]})
    for o_runs in runs:
        for n_runs in runs:
            for o_noise in (None, 0.0, 0.01, 0.4, -1.0):
                for n_noise in (None, 0.02, 0.4):
                    o, n = {"runs": o_runs, "speedup_noise": o_noise}, {"runs": n_runs, "speedup_noise": n_noise}
                    for metric in ("speedup", "compile_time_cold_s"):
                        sds = [repeat_sd([o_runs.get(metric, []), n_runs.get(metric, [])]) if o_runs or n_runs else None]
                        if metric in BLOCK_TIMED_METRICS:
                            sds += [sd_of_halfwidth(o_noise), sd_of_halfwidth(n_noise)]
                        expected, got = max((sd for sd in sds if sd is not None), default=None), own_sd(o, n, metric)
                        assert got == expected or (got is None and expected is None) or (got != got and expected != expected)


def test_case_changes_judge_every_cell_as_judge_does_with_the_cases_own_sd():
    # /compare/'s loop (issue #46 item 13: judge_cell, the stated intervals read once a case) gives each cell
    # judge's figures and tone, against the series' band and the case's own sd (pairs.own_sd), to the bit.
    from contract.comparison import case_sd, judge
    from dashboard.results.selectors.common import METRICS
    from dashboard.results.selectors.compare import case_changes
    from dashboard.results.selectors.pairs import own_sd

    nan = float("nan")
    base = {"speedup": 1.2, "compiled_latency_ms": 3.0, "compile_time_cold_s": 20.0, "compile_time_warm_s": 0.0,
            "graph_break_count": 2, "recompile_count": None, "compile_reference": ""}
    heads = ({"speedup": 1.5, "compiled_latency_ms": 2.0, "compile_time_cold_s": 40.0, "compile_time_warm_s": 1.0,
              "graph_break_count": 2, "recompile_count": 1},
             {"speedup": 1.21, "compiled_latency_ms": nan, "compile_time_cold_s": 20.5, "compile_time_warm_s": None,
              "graph_break_count": 0, "recompile_count": None})
    runs = ({}, {"speedup": [1.0, 1.6], "compile_time_cold_s": [20.0, 21.0]})
    for head in heads:
        for o_runs, n_runs in ((runs[0], runs[0]), (runs[1], runs[0]), (runs[0], runs[1])):
            for o_noise, n_noise in ((None, None), (0.01, 0.3), (0.4, None)):
                o = {m.name: base.get(m.name) for m in METRICS} | {"runs": o_runs, "speedup_noise": o_noise, "compile_reference": ""}
                n = {m.name: head.get(m.name) for m in METRICS} | {"runs": n_runs, "speedup_noise": n_noise, "compile_reference": ""}
                bands = {m.name: 0.03 for m in METRICS if m.noisy}
                for name, c in case_changes(o, n, bands=bands, threshold=0.05).items():
                    m = next(m for m in METRICS if m.name == name)
                    within = own_sd(o, n, name) if m.noisy else None
                    judged = judge(m, o[name], n[name], threshold=0.05, noise=bands.get(name), within_sd=within)
                    tone = "" if not m.noisy and judged.tone == "same" else judged.tone
                    expected = (judged.old, judged.new, judged.change, tone, judged.noise,
                                case_sd(band=judged.noise, within_sd=within) if m.noisy else None)
                    assert all(a == b or (a != a and b != b) for a, b in zip((c.old, c.new, c.change, c.tone, c.noise, c.sd), expected)), name
