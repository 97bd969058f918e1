"""The one noise rule (docs/noise-and-findings.md) where #27's first pass left it out: the home
page's class tables and suite trends, /dynamic/, /compare/'s geomean label and the A/B geomean row;
and a build never drawn or named as its own predecessor on the home page."""
from __future__ import annotations

import re

import pytest

from contract.variants import Overrides, variant_label
from dashboard.regressions.ab import ab_compare
from dashboard.results.models import Build
from dashboard.results.selectors.overview import overview_list, overview_trend
from dashboard.results.services import run_ingest
from tests.dashboard.page_history import cases, ingest_build, ref_for_day, sha_for
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db


def speedup_cell(html: str, machine_class: str = "cpu") -> str:
    """The first configuration row's geomean speedup cell of a class's table on the home page."""
    block = html.split(f'id="class-{machine_class}"')[1].split("</table>")[0]
    return re.findall(r'<td class="num cell[^"]*"[^>]*>.*?</td>', block.split("<tbody>")[1])[1]


@pytest.mark.parametrize("noise, tone, words", [
    (0.01, "better strong", ""),  # ±1 % cases: +24 % is a change
    (0.24, "same", "within noise"),  # ±24 % cases (sd 0.11, band ±30 %): +24 % is not
    (1.74, "too_noisy", "too noisy to track"),  # ±174 %: past the 20 % bound
])
def test_home_cells_judge_a_change_by_its_cases_noise(client, noise, tone, words):
    ingest_build(1, cases(speedup=1.0, speedup_noise=noise))
    ingest_build(2, cases(speedup=1.24, speedup_noise=noise))
    row = overview_list()[0].rows[0]
    cell = row.cells[1]
    assert cell.figure.key == "speedup_geomean" and cell.change == pytest.approx(0.24) and cell.tone == tone
    html = speedup_cell(client.get("/").content.decode())
    assert f'class="num cell {tone}"' in html and "+24" in html
    assert (words in html) if words else ("within noise" not in html and "too noisy" not in html)


def test_home_geomean_change_leaves_out_the_cases_too_noisy_to_track(client):
    # mlp_loop's cases state ±174 % (its speedup 1 -> 10, noise), resnet_train's ±1 % (1 -> 1.1, +10 %):
    # the change is resnet_train's alone and coloured.
    def build(mlp: float, resnet: float) -> list[dict]:
        return [make_result(w, regime, speedup=s, speedup_noise=n) for w, s, n in (("mlp_loop", mlp, 1.74), ("resnet_train", resnet, 0.01))
                for regime in ("static", "backed", "unbacked")]
    ingest_build(1, build(1.0, 1.0))
    ingest_build(2, build(10.0, 1.1))
    cell = overview_list()[0].rows[0].cells[1]
    assert cell.change == pytest.approx(0.10) and cell.tone == "better strong"


def test_a_commit_measured_twice_in_one_class_is_one_trend_point_and_named_on_home(client):
    # The local measurement and an imported one of one sha, both in class cpu, nothing before them.
    ingest_build(1, cases(speedup=1.0))
    imported = make_document(git_sha=sha_for(1), results=cases(speedup=1.5))
    imported["build"].update(commit_time="2026-11-01T00:00:00+00:00", label="nightly 1", local_label="imported")
    run_ingest(document=imported)
    assert Build.objects.filter(git_sha=sha_for(1)).count() == 2
    trend = overview_trend(machine_class="cpu", since=None)
    assert trend["builds"] == [f"{ref_for_day(1)}+imported"]
    assert {len(points) for points in trend["points"].values()} == {1}
    assert [points[0]["speedup_geomean"] for points in trend["points"].values()] == pytest.approx([1.5] * 3)  # the later one
    html = client.get("/").content.decode()
    assert f"same build: another measurement of {ref_for_day(1)}</span>, nothing to compare" in html
    assert "no earlier build to compare with" not in html
    night = html.split('class="night')[1].split("</tr>")[0]
    assert f"same build: another measurement of {ref_for_day(1)}" in night.replace("<wbr>", "")
    assert "no earlier build" not in night

    ingest_build(2, cases(speedup=1.5))  # a later commit: one point each, compared with the one before
    assert overview_trend(machine_class="cpu", since=None)["builds"] == [f"{ref_for_day(1)}+imported", ref_for_day(2)]
    assert "same build: another measurement" not in client.get("/").content.decode().split("Suite trends")[0].split("</table>", 1)[1]


def test_compare_geomean_label_counts_the_cases_it_is_over(client):
    def build(speedup: float) -> list[dict]:
        return ([make_result("mlp_loop", r, speedup=speedup, speedup_noise=1.74) for r in ("static", "backed")]
                + [make_result("resnet_train", "static", speedup=speedup), make_result("resnet_train", "backed", status="crash", speedup=None)])
    ingest_build(1, build(1.0))
    ingest_build(2, build(1.1))
    html = client.get(f"/compare/?machine=cpu&base={ref_for_day(1)}&head={ref_for_day(2)}").content.decode()
    label = html.split('id="compare-summary"><td colspan="3">')[1].split("</td>")[0]
    assert label == "geomean over 3 cases passing in both, less the cases too noisy to track in a figure (2 in speedup); totals for counts"


def test_ab_geomean_of_cases_all_too_noisy_says_so(client):
    base = make_document(results=[make_result("mlp_loop", r, speedup_noise=1.74) for r in ("static", "backed")])
    variant = make_document(results=[make_result("mlp_loop", r, speedup=2.0, speedup_noise=1.74) for r in ("static", "backed")])
    overrides = Overrides.build({"inductor.coordinate_descent_tuning": True})
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    run_ingest(document=base)
    run_ingest(document=variant)
    ab = ab_compare(base=Build.objects.get(overrides={}), variant=Build.objects.exclude(overrides={}).get(), machine_class="cpu")
    assert len(ab.geomeans) == 2  # one per configuration
    assert all(g.cells["speedup"].tone == "too_noisy" and g.cells["speedup"].change is None for g in ab.geomeans)
    ref = f"{base['build']['git_sha'][:12]}+{variant['build']['local_label']}"
    html = client.get(f"/ab/?base={base['build']['git_sha'][:12]}&variant={ref}&machine=cpu").content.decode()
    rows = html.split('<tr class="summary geomean">')[1:]
    assert len(rows) == 2
    for row in rows:
        speedup = row.split("</tr>")[0].split('data-metric="speedup"')[1].split("</td>")[0]
        assert "too noisy to track" in speedup and "–" not in speedup


def dynamic_pair(backed: float, unbacked: float, noise: float) -> list[dict]:
    return [make_result("mlp_loop", "backed", speedup=backed, speedup_noise=noise),
            make_result("mlp_loop", "unbacked", speedup=unbacked, speedup_noise=noise)]


@pytest.mark.parametrize("noise, tone, words", [
    (0.01, "worse", ""),  # 0.8 with ±1 % sides: unbacked slower
    (0.10, "", "within noise"),  # 0.9 with ±10 % sides: the ratio's 95 % band is ±14 %
    (1.74, "too_noisy", "too noisy to track"),
])
def test_dynamic_gap_is_judged_against_both_sides_noise(client, noise, tone, words):
    unbacked = 0.8 if noise != 0.10 else 0.9  # 0.9: past the 5 % highlight, within ±10 % sides' noise
    ingest_build(1, dynamic_pair(1.0, unbacked, noise))
    html = client.get("/dynamic/?machine=cpu").content.decode()
    cell = html.split('<td class="num ratio')[1].split("</td>")[0]
    assert cell.startswith(f' {tone}"') and (words in cell if words else "verdict" not in cell)
    assert ("not a finding" in cell) == (tone == "worse")  # a coloured gap says why it is no finding (issue #42)
    assert ('<tr class="gap' in html) == (tone == "worse")


def test_dynamic_geomean_leaves_out_gaps_too_noisy_to_track(client):
    ingest_build(1, [*dynamic_pair(1.0, 0.5, 0.01),  # mlp_loop 0.5, tracked
                     make_result("resnet_train", "backed", speedup=1.0, speedup_noise=1.74),
                     make_result("resnet_train", "unbacked", speedup=8.0, speedup_noise=1.74)])  # 8.0: too noisy
    summary = client.get("/dynamic/?machine=cpu").content.decode().split('id="dynamic-summary">')[1].split("</p>")[0]
    assert '<strong id="geomean-gap">0.500</strong> over the 2 workloads where both regimes passed' in summary
    assert "(1 too noisy to track left out)" in summary
