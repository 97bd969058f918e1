"""Compare two builds: only cases present in both, old -> new per metric, filters, sorting, the
geomean row, one-sided cases listed apart, build identifiers, 400 on bad parameters."""
from __future__ import annotations

import pytest

from dashboard.results.models import Build
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.common import Ambiguous, NotFound, build_ref
from tests.dashboard.page_history import ingest_build, ref_for_day, sha_for
from tests.documents import make_result

pytestmark = pytest.mark.django_db
EXTRA = [{"name": "bert", "phase": "infer"}, {"name": "gone_model", "phase": "infer"}, {"name": "new_model", "phase": "infer"}]


def two_builds():
    ingest_build(1, [
        make_result("mlp_loop", "static", speedup=2.0, speedup_noise=0.01),
        make_result("resnet_train", "static", speedup=1.0, speedup_noise=0.01),
        make_result("bert", "static", speedup=1.0),
        make_result("gone_model", "static"),
    ], extra_workloads=EXTRA)
    bert = make_result("bert", "static", speedup=1.0, graph_break_count=3)
    bert["graph_breaks"].append({"reason": "Data-dependent branching", "location": "bert.py:40", "count": 2})
    more_of_the_same = make_result("resnet_train", "static", speedup=1.2, speedup_noise=0.01, graph_break_count=4)
    more_of_the_same["graph_breaks"][0]["count"] = 4
    ingest_build(2, [
        make_result("mlp_loop", "static", speedup=1.5, speedup_noise=0.01),  # -25%: regressed
        more_of_the_same,  # +20%: improved; more breaks, but of the reason it had: no new reason
        bert,  # same speed, a new graph-break reason (x2)
        make_result("new_model", "static"),
    ], extra_workloads=EXTRA)


def rows_of(html: str) -> dict[str, str]:
    table = html.split('id="compare-table"')[1].split("</table>")[0]
    return {row.split('">', 2)[2].split("</a>")[0]: row for row in table.split('<tr class="case')[1:]}


def test_defaults_to_latest_against_previous_and_compares_only_common_cases(client):
    two_builds()
    html = client.get("/compare/").content.decode()
    rows = rows_of(html)

    assert set(rows) == {"mlp_loop", "resnet_train", "bert"}
    assert "2.000× → 1.500×" in rows["mlp_loop"] and "-25.0%" in rows["mlp_loop"]
    only_base = html.split('id="only-base"')[1].split("</table>")[0]
    only_head = html.split('id="only-head"')[1].split("</table>")[0]
    assert "gone_model" in only_base and "new_model" in only_head and "gone_model" not in only_head
    summary = html.split('id="compare-summary"')[1].split("</tr>")[0]
    # geomean speedup over the three common cases: (2*1*1)^(1/3) -> (1.5*1.2*1)^(1/3)
    assert f"{(2.0) ** (1 / 3):.3f}× → {(1.8) ** (1 / 3):.3f}×" in summary


def test_filters_pick_regressed_improved_new_failures_and_new_graph_breaks(client):
    two_builds()
    base, head = ref_for_day(1), ref_for_day(2)
    shown = {f: set(rows_of(client.get(f"/compare/?base={base}&head={head}&filter={f}").content.decode()))
             for f in ("regressed", "improved", "new_graph_breaks", "new_failures")}
    assert shown == {"regressed": {"mlp_loop"}, "improved": {"resnet_train"}, "new_graph_breaks": {"bert"}, "new_failures": set()}
    # Regressed by another metric, with another threshold.
    html = client.get(f"/compare/?base={base}&head={head}&filter=regressed&threshold=35").content.decode()  # -25 %: 1.33x
    assert set(rows_of(html)) == set()


def test_a_pass_turning_into_a_failure_is_a_new_failure_and_a_regression(client):
    ingest_build(1, [make_result("mlp_loop", "static")])
    ingest_build(2, [make_result("mlp_loop", "static", status="oom", speedup=None)])
    html = client.get("/compare/?filter=new_failures").content.decode()
    row = rows_of(html)["mlp_loop"]
    assert "pass → oom" in row and "new_failures" in row and "regressed" in row


def test_sorting_by_a_metric_orders_by_its_relative_change(client):
    two_builds()
    ascending = list(rows_of(client.get("/compare/?sort=speedup&dir=asc").content.decode()))
    descending = list(rows_of(client.get("/compare/?sort=speedup&dir=desc").content.decode()))
    assert ascending == ["mlp_loop", "bert", "resnet_train"] and descending == ["resnet_train", "bert", "mlp_loop"]


def test_swapping_base_and_head_swaps_the_direction(client):
    two_builds()
    html = client.get(f"/compare/?base={ref_for_day(2)}&head={ref_for_day(1)}&filter=improved").content.decode()
    assert set(rows_of(html)) == {"mlp_loop"}


def test_build_refs_resolve_by_prefix_and_local_label():
    ingest_build(1, [make_result()])
    build = Build.objects.get()
    assert build_ref(build) == ref_for_day(1)
    assert build_resolve(ref=sha_for(1)[:7]) == build and build_resolve(ref=sha_for(1).upper()) == build
    Build.objects.create(torch_version="x", git_sha=build.git_sha, local_label="cu130", ordered_at=build.ordered_at)
    assert build_resolve(ref=f"{ref_for_day(1)}+cu130").local_label == "cu130"
    Build.objects.create(torch_version="x", git_sha=sha_for(1)[:8] + "f" * 32, ordered_at=build.ordered_at)
    with pytest.raises(Ambiguous):
        build_resolve(ref=sha_for(1)[:7])
    with pytest.raises(NotFound):
        build_resolve(ref="abcdef0")
    with pytest.raises(NotFound):
        build_resolve(ref="not-a-sha")


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("base={ref}&base={ref}", "base"),
        ("sort=nope", "sort"),
        ("filter=worst", "filter"),
        ("dir=up", "dir"),
        ("threshold=-1", "threshold"),
        ("threshold=abc", "threshold"),
        ("page=0", "page"),
        ("page=99&machine=cpu", "page"),
        ("metric=vibes", "metric"),
        ("machine=gpu-z", "machine"),
        ("head={ref}&machine=gpu-h100", "head"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(client, query, parameter):
    ingest_build(1, [make_result()])
    ingest_build(2, [make_result()])
    ingest_build(3, [make_result()], machine_class="gpu-h100", sha="0003" + "c" * 36)
    page = client.get("/compare/?" + query.format(ref=ref_for_day(1)))
    assert page.status_code == 400
    assert f'data-parameter="{parameter}"' in page.content.decode()


@pytest.mark.parametrize(("query", "parameter"), [("base=zzz", "base"), ("head=abcdef0123", "head")])
def test_unknown_builds_are_404_naming_the_parameter(client, query, parameter):
    ingest_build(1, [make_result()])
    page = client.get("/compare/?" + query)
    assert page.status_code == 404
    assert f'data-parameter="{parameter}"' in page.content.decode()


def test_one_build_only_says_there_is_nothing_to_compare(client):
    ingest_build(1, [make_result()])
    page = client.get("/compare/")
    assert page.status_code == 200 and b"nothing earlier to compare it with" in page.content
    assert b"(1 run of it" in page.content and b'<option value="">(choose a base)</option>' in page.content
    assert client.get("/compare/").status_code == 200
