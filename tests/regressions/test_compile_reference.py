"""A change of compile reference starts a new baseline of compile_cpu_ratio (only that metric):
the stored reference, the series' points, detection, the noise model, both verdicts, /compare/ and
re-measurement decisions. Real documents: tests/regressions/test_real_verdicts.py."""
from __future__ import annotations

import importlib
import random

import pytest
from django.apps import apps

from dashboard.regressions.history import Point, comparable_points, points_from_rows, reference_breaks
from dashboard.regressions.models import Regression, Remeasurement
from dashboard.regressions.noise import class_priors, point_noise
from dashboard.regressions.selectors import build_verdict
from dashboard.regressions.services import detection_run
from dashboard.results.compile_reference import COMPILE_REFERENCE_MAX_LENGTH, compile_reference_key, compile_reference_of
from dashboard.results.models import Result, Run
from dashboard.results.selectors.common import build_ref
from runner.ci import format_verdict
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

REF_A = {"python": "/opt/ref/bin/python", "torch": "2.11.0+cu130", "git_sha": "70d99e998b4955e0049d13a98d77ae1b14db1f45"}
REF_B = {"python": "/opt/ref/bin/python", "torch": "2.12.0+cu130", "git_sha": "ab" * 20}
KEY_A, KEY_B = "2.11.0+cu130@70d99e998b49", "2.12.0+cu130@abababababab"


# --- the reference's name ---------------------------------------------------------------------------
def pairs_environment(reference: dict | None, ratio: float = 1.0) -> dict:
    return {"compile_pairs": {"reference": reference, "pairs": [], "work_ratio": ratio, "wall_ratio": ratio}}


@pytest.mark.parametrize("environment, key", [
    (pairs_environment(REF_A), KEY_A),
    (pairs_environment({**REF_A, "python": "/elsewhere/bin/python3"}), KEY_A),  # the path is not part of it
    (pairs_environment({"python": "/opt/ref/bin/python", "torch": None, "git_sha": None}), "python:/opt/ref/bin/python"),
    (pairs_environment({"torch": "2.11.0", "git_sha": None}), "2.11.0@"),
    (pairs_environment(None), ""),
    ({"compile_pairs": {"reference": REF_A, "method": 2}}, f"{KEY_A}/m2"),  # measured another way: a new baseline
    ({"compile_pairs": {"reference": REF_A, "method": 1}}, KEY_A),
    ({"timing": {}}, ""),
    ({}, ""),
    (None, ""),
    ({"compile_pairs": "odd"}, ""),
])
def test_compile_reference_of_a_case_environment(environment, key):
    assert compile_reference_of(environment) == key


def test_a_long_reference_name_fits_its_column_and_stays_distinct():
    long_a = compile_reference_key(torch="x" * 300 + "a", git_sha=None)
    long_b = compile_reference_key(torch="x" * 300 + "b", git_sha=None)
    assert len(long_a) == len(long_b) == COMPILE_REFERENCE_MAX_LENGTH and long_a != long_b


# --- points ----------------------------------------------------------------------------------------
def row(build_id: int, ratio: float | None, reference: str, run_id: int = 0) -> dict:
    return {"build_id": build_id, "run_id": run_id or build_id, "samples": {}, "host_probe": None, "host_share": None,
            "compile_reference": reference, "status": "pass", "speedup": 1.25, "compiled_latency_ms": 2.0,
            "compile_time_cold_s": 7.5, "compile_time_warm_s": None, "compile_cpu_ratio": ratio,
            "compiled_peak_memory_bytes": 1000}


def test_a_build_run_against_two_references_keeps_the_newest_runs_ratio():
    points = points_from_rows([row(1, 1.0, KEY_A), row(1, 1.02, KEY_A, run_id=11),
                               row(2, 1.0, KEY_A), row(2, 1.31, KEY_B, run_id=12)])
    assert [(p.compile_reference, p.values["compile_cpu_ratio"], p.run_values["compile_cpu_ratio"]) for p in points] == [
        (KEY_A, pytest.approx(1.01), [1.0, 1.02]), (KEY_B, 1.31, [1.31])]
    assert points[1].run_values["compile_time_cold_s"] == [7.5, 7.5]  # other metrics keep every run
    assert points[1].reference("compile_cpu_ratio") == KEY_B and points[1].reference("speedup") is None


def test_comparable_points_leave_out_the_ratio_of_another_reference_and_nothing_else():
    points = points_from_rows([row(1, 1.0, KEY_A), row(2, 1.01, KEY_A), row(3, None, ""), row(4, 1.3, KEY_B),
                               row(5, 1.31, KEY_B)])
    scoped = comparable_points(points, "compile_cpu_ratio")
    assert [p.values["compile_cpu_ratio"] for p in scoped] == [None, None, None, 1.3, 1.31]
    assert [p.values["speedup"] for p in scoped] == [1.25] * 5 and "compile_cpu_ratio" not in scoped[0].run_values
    assert points[0].values["compile_cpu_ratio"] == 1.0  # the points themselves are untouched
    assert [p.values["compile_cpu_ratio"] for p in comparable_points(points, "compile_cpu_ratio", reference=KEY_A)] == [
        1.0, 1.01, None, None, None]
    assert comparable_points(points, "speedup") is points
    assert reference_breaks(points, "compile_cpu_ratio") == [3] and reference_breaks(points, "speedup") == []


def test_the_noise_of_a_series_whose_reference_changed_is_each_references_own():
    rng = random.Random(3)
    levels = [1.0] * 8 + [1.3] * 8
    rows = [row(i, level * (1 + rng.gauss(0, 0.01)), KEY_A if i < 8 else KEY_B) for i, level in enumerate(levels)]
    noise = point_noise(points_from_rows(rows), "compile_cpu_ratio")
    same = point_noise(points_from_rows([{**r, "compile_reference": KEY_A} for r in rows]), "compile_cpu_ratio")
    # Measured against one reference, the 30 % step would be a residual (winsorised); across a
    # change of reference it is left out.
    assert noise.source == same.source == "series" and (noise.dof, same.dof) == (14, 15)
    assert noise.sd < same.sd and noise.sd < 0.013


# --- detection, noise prior and verdicts on stored histories --------------------------------------------
def ratio_case(ratio: float, reference: dict | None, *, regime: str = "static") -> dict:
    result = make_result("mlp_loop", regime, compile_cpu_ratio=ratio)
    if reference is not None:
        result["environment"] = pairs_environment(reference, ratio)
    return result


def ratio_history(levels: list[tuple[float, dict | None]], *, seed: int = 5, regimes=("static",), day0: int = 1,
                  verdicts: list | None = None) -> list[Run]:
    """One build per (ratio level, reference), a case per regime at that level plus 1 % noise,
    detected in order; ``verdicts``: each build's default verdict as soon as it is detected."""
    rng = random.Random(seed)
    runs = []
    for i, (level, reference) in enumerate(levels):
        document = ingest_build(day0 + i, [ratio_case(level * (1 + rng.gauss(0, 0.01)), reference, regime=r) for r in regimes])
        run = Run.objects.get(pk=document["run"]["id"])
        detection_run(run_id=run.id)
        runs.append(run)
        if verdicts is not None:
            verdicts.append(build_verdict(build=run.build, machine_class="cpu"))
    return runs


def ratio_findings(runs: list[Run]):
    return (Regression.objects.filter(metric="compile_cpu_ratio", first_bad_build_id__in=[r.build_id for r in runs]),
            Remeasurement.objects.filter(metric="compile_cpu_ratio", build_id__in=[r.build_id for r in runs]))


@pytest.mark.django_db
def test_ingest_stores_the_reference_of_each_result():
    runs = ratio_history([(1.0, REF_A), (1.0, None)])
    assert list(Result.objects.filter(run=runs[0]).values_list("compile_reference", flat=True)) == [KEY_A]
    assert list(Result.objects.filter(run=runs[1]).values_list("compile_reference", flat=True)) == [""]


@pytest.mark.django_db
def test_a_change_of_reference_is_a_new_baseline_and_the_first_week_rule_applies_from_it():
    verdicts = []
    runs = ratio_history([(1.0, REF_A)] * 12 + [(1.3, REF_B)] * 4 + [(1.69, REF_B)] * 2, verdicts=verdicts)
    regressions, remeasurements = ratio_findings(runs[:16])
    assert not regressions.exists() and not remeasurements.exists()
    assert [v.verdict for v in verdicts] == ["pass"] * 16 + ["suspect", "regressed"], [(v.verdict, [(f["metric"], f["message"]) for f in v.regressions]) for v in verdicts[16:]]
    regression = Regression.objects.get(metric="compile_cpu_ratio", kind="regression")
    assert regression.first_bad_build_id == runs[16].build_id and regression.details["rule"] == "short_history"
    assert regression.before_value == pytest.approx(1.3, rel=0.03)  # the new reference's builds only
    assert [n["build_reference"] for n in verdicts[12].notes] == [KEY_B] and verdicts[13].notes == []
    # Asked again now, the first bad build is where the regression was first seen.
    assert build_verdict(build=runs[16].build, machine_class="cpu").verdict == "regressed"


@pytest.mark.django_db
def test_the_same_step_against_one_reference_is_a_regression():
    verdicts = []
    runs = ratio_history([(1.0, REF_A)] * 12 + [(1.3, REF_A)] * 2, verdicts=verdicts)
    assert [v.verdict for v in verdicts] == ["pass"] * 12 + ["suspect", "regressed"]
    assert Regression.objects.get(metric="compile_cpu_ratio", kind="regression").first_bad_build_id == runs[12].build_id


@pytest.mark.django_db
def test_the_class_prior_is_not_widened_by_a_change_of_reference():
    ratio_history([(1.0, REF_A)] * 8 + [(1.3, REF_B)] * 8, regimes=("static", "backed"))
    assert class_priors(machine_class="cpu")["compile_cpu_ratio"] < 0.02


@pytest.mark.django_db
def test_a_named_baseline_across_references_does_not_compare_the_ratio_and_says_so(client):
    runs = ratio_history([(1.0, REF_A)] * 3 + [(1.5, REF_B)] * 2 + [(1.0, REF_B)], regimes=("static", "backed"))
    verdict = build_verdict(build=runs[4].build, machine_class="cpu", baseline=runs[2].build)
    assert verdict.verdict == "pass" and verdict.regressions == []
    assert verdict.notes == [{
        "metric": "compile_cpu_ratio", "kind": "not_comparable", "cases": 2, "baseline_reference": KEY_A,
        "build_reference": KEY_B, "message": verdict.notes[0]["message"]}]
    assert "reference changed" in verdict.notes[0]["message"] and KEY_A in verdict.notes[0]["message"]
    # Against a baseline of the same reference it is compared: 1.5 -> 1.0 is an improvement, 1.0 -> 1.5 a regression.
    assert build_verdict(build=runs[5].build, machine_class="cpu", baseline=runs[4].build).notes == []
    back = build_verdict(build=runs[4].build, machine_class="cpu", baseline=runs[5].build)
    assert back.verdict == "regressed" and {f["metric"] for f in back.regressions} == {"compile_cpu_ratio"}

    answer = client.get(f"/api/v1/verdict/?build={build_ref(runs[4].build)}&baseline={build_ref(runs[2].build)}").json()
    assert answer["verdict"] == "pass" and answer["notes"][0]["kind"] == "not_comparable"
    assert answer["notes"][0]["cases"] == 2
    printed = format_verdict(answer)
    assert "note: compile_cpu_ratio not compared in 2 cases (reference changed)" in printed


@pytest.mark.django_db
def test_a_suspect_whose_next_build_has_another_reference_is_closed_inconclusive():
    runs = ratio_history([(1.0, REF_A)] * 4 + [(1.4, REF_A)] + [(1.4, REF_B)])
    request = Remeasurement.objects.get(metric="compile_cpu_ratio")
    assert request.build_id == runs[4].build_id and request.suspect["compile_reference"] == KEY_A
    assert request.status == "inconclusive" and request.decision["decided_by"] == "reference_changed"
    assert request.decision["other_compile_reference"] == KEY_B
    assert not Regression.objects.filter(metric="compile_cpu_ratio", kind="regression").exists()
    assert build_verdict(build=runs[4].build, machine_class="cpu").verdict == "pass"  # nothing pending


# --- /compare/ ----------------------------------------------------------------------------------------
def compare_builds():
    """static: reference A -> B (1.0 -> 1.3); backed: A -> A (1.0 -> 1.3, worse)."""
    ingest_build(1, [ratio_case(1.0, REF_A), ratio_case(1.0, REF_A, regime="backed")])
    ingest_build(2, [ratio_case(1.3, REF_B), ratio_case(1.3, REF_A, regime="backed")])


def cells(html: str) -> dict[str, str]:
    table = html.split('id="compare-table"')[1].split("</table>")[0]
    out = {}
    for case in table.split('<tr class="case')[1:]:
        regime = "backed" if "· backed ·" in case else "static"
        out[regime] = case.split('data-metric="compile_cpu_ratio"')[0].rsplit("<td", 1)[1] + \
            case.split('data-metric="compile_cpu_ratio"')[1].split("</td>")[0]  # its tooltip and its text
    return out


@pytest.mark.django_db
def test_compare_says_reference_changed_instead_of_a_change(client):
    compare_builds()
    html = client.get("/compare/?metric=compile_cpu_ratio").content.decode()
    by_regime = cells(html)
    assert "reference changed" in by_regime["static"] and "+30.0%" not in by_regime["static"]
    assert 'class="num reference_changed"' in by_regime["static"]
    assert "worse" in by_regime["backed"] and "+30.0%" in by_regime["backed"]
    summary = html.split('id="compare-summary"')[1].split("</tr>")[0]
    ratio = summary.split('data-metric="compile_cpu_ratio"')[1].split("</td>")[0]
    assert "1.000× → 1.300×" in ratio  # the geomean over the backed case only
    regressed = client.get("/compare/?metric=compile_cpu_ratio&filter=regressed").content.decode()
    assert set(cells(regressed)) == {"backed"}

    api = client.get("/api/v1/compare/?head=0002aaaaaaaa&metric=compile_cpu_ratio").json()
    changes = {r["config"]["shape_regime"]: r["changes"]["compile_cpu_ratio"] for r in api["results"]}
    assert changes["static"]["tone"] == "reference_changed" and changes["static"]["change"] is None
    assert changes["backed"]["tone"] == "worse" and changes["backed"]["change"] == pytest.approx(0.3)


# --- the back-fill ------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_the_migration_back_fills_the_reference_from_stored_environments():
    ratio_history([(1.0, REF_A), (1.0, None), (1.0, {"python": "/opt/ref/bin/python"})])
    stored = dict(Result.objects.values_list("id", "compile_reference"))
    Result.objects.update(compile_reference="")
    migration = importlib.import_module("dashboard.results.migrations.0011_result_compile_reference")
    migration.backfill(apps, None)
    assert dict(Result.objects.values_list("id", "compile_reference")) == stored
    assert sorted(stored.values()) == ["", KEY_A, "python:/opt/ref/bin/python"]


def test_points_without_a_reference_are_comparable_with_each_other():
    points = [Point(build_id=i, values={"compile_cpu_ratio": 1.0}) for i in range(3)]
    assert comparable_points(points, "compile_cpu_ratio") == points and reference_breaks(points, "compile_cpu_ratio") == []
