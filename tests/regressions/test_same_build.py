"""What is compared with what (issue #27 items 1 and 9, #33 item 5): one commit stored as two builds
(the quick start's local ``<sha>+cpu`` beside the imported ``<sha>+cpu.imported``) is never before and
after; a full sha of two builds names the one measured here; a variant is judged against its base
build, or answers not_compared, never a plain pass. docs/machine-classes-and-verdicts.md."""
from __future__ import annotations

import random

import pytest

from contract.variants import Overrides, variant_label
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.models import Regression, Remeasurement
from dashboard.regressions.selectors import build_verdict
from dashboard.regressions.services import detection_run
from dashboard.results.models import Build, Run
from dashboard.results.selectors.build_refs import build_resolve
from dashboard.results.selectors.common import Ambiguous
from runner.engine.environment import cpu_machine_class
from tests.dashboard.page_history import sha_for
from tests.documents import WORKLOADS, make_document
from tests.regressions.history import case

pytestmark = pytest.mark.django_db
SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def stored(day: int, speedup: float, *, sha: str | None = None, label: str = "", imported: bool = False,
           overrides: Overrides | None = None, seed: int = 0) -> Run:
    """One build's run of mlp_loop static at ``speedup``, detected; ``imported`` as ``ingest --imported``."""
    rng = random.Random(seed or day)
    document = make_document(git_sha=sha or sha_for(day), results=[case(speedup * (1 + rng.gauss(0, 0.003)), rng=rng)])
    document["build"].update(commit_time=f"2026-11-{day:02d}T00:00:00+00:00", local_label=label, label=f"nightly {day}")
    if overrides:
        document["build"].update(overrides=overrides.as_document(), local_label=variant_label(label, overrides))
    document["workloads"] = WORKLOADS
    outcome = run_ingest_and_detect(document=document, imported=imported)
    detection_run(run_id=outcome.run_id)  # a variant's: against its base build
    return Run.objects.select_related("build").get(pk=outcome.run_id)


@pytest.fixture
def same_sha_pair():
    """Five nightlies, then one commit imported (1.25x) and measured here 2x slower (0.62x), in one
    class: the worst case (the quick start now measures into its own class, ``cpu_machine_class``)."""
    for day in range(1, 6):
        stored(day, 1.25)
    imported = stored(6, 1.25, sha=SHA, label="cpu", imported=True)
    local = stored(6, 0.62, sha=SHA, label="cpu", seed=60)
    return imported.build, local.build


def test_a_build_and_its_imported_copy_are_never_before_and_after(same_sha_pair):
    imported, local = same_sha_pair
    assert imported.local_label == "cpu.imported" and local.local_label == "cpu"
    assert not Regression.objects.exists() and not Remeasurement.objects.exists()  # 2x slower, yet no finding
    verdict = build_verdict(build=local, machine_class="cpu")
    assert verdict.verdict == "pass" and verdict.baseline.git_sha != SHA  # its previous build is another commit's
    named = build_verdict(build=local, machine_class="cpu", baseline=imported)
    assert (named.verdict, named.reason) == ("not_compared", "same_build")
    elsewhere = build_verdict(build=local, machine_class="cpu-amd-epyc-2c", baseline=imported)  # no results there
    assert (elsewhere.verdict, elsewhere.reason) == ("not_compared", "same_build")
    assert named.message == ("same build: nothing to compare (cf30153c4c13+cpu and cf30153c4c13+cpu.imported: the same commit)")


def test_the_home_page_compares_each_copy_with_the_commit_before(client, same_sha_pair):
    page = client.get("/", {"machine": "cpu"}).content.decode()  # judged against the commit before, never the other copy
    assert f"against {sha_for(5)[:12]} (" in page and "cf30153c4c13+cpu.imported (" not in page.split("Recent runs")[0]


def test_a_real_change_at_the_next_commit_is_still_found():
    for day in range(1, 6):
        stored(day, 1.25)
    stored(6, 1.25, sha=SHA, label="cpu", imported=True)
    stored(6, 1.25, sha=SHA, label="cpu", seed=60)
    stored(7, 0.62, seed=70)
    stored(8, 0.62, seed=80)
    regression = Regression.objects.get(metric="speedup", kind="regression")
    assert regression.first_bad_build.git_sha == sha_for(7) and regression.last_good_build.git_sha == SHA


def test_compare_and_the_api_say_same_build(client, same_sha_pair):
    page = client.get("/compare/", {"machine": "cpu", "base": "cf30153c4c13+cpu.imported", "head": "cf30153c4c13+cpu"})
    text = page.content.decode()
    assert page.status_code == 200 and "same build: nothing to compare" in text and 'id="compare-table"' not in text
    api = client.get("/api/v1/compare/", {"base": "cf30153c4c13+cpu.imported", "head": "cf30153c4c13+cpu"})
    assert api.status_code == 400 and api.json()["errors"][0]["field"] == "base"
    assert "same build: nothing to compare" in api.json()["errors"][0]["message"]
    verdict = client.get("/api/v1/verdict/", {"build": "cf30153c4c13+cpu", "baseline": "cf30153c4c13+cpu.imported",
                                             "fail_on_regression": "true"})
    assert verdict.status_code == 409 and verdict.json()["verdict"] == "not_compared"  # no answer is not a pass
    assert verdict.json()["message"].startswith("same build: nothing to compare")


def test_a_full_sha_of_two_builds_names_the_local_one_or_lists_them(same_sha_pair):
    imported, local = same_sha_pair
    assert build_resolve(ref=SHA) == local == build_resolve(ref="cf30153")  # the one measured here
    Build.objects.create(torch_version="2.13.0+cpu", git_sha=SHA, local_label="patched", ordered_at=local.ordered_at)
    with pytest.raises(Ambiguous) as raised:
        build_resolve(ref=SHA)
    assert str(raised.value) == (f"3 builds have the sha '{SHA}': cf30153c4c13+patched, cf30153c4c13+cpu, "
                                 "cf30153c4c13+cpu.imported; name one")
    assert "more digits" not in str(raised.value)


def test_a_variant_is_judged_against_its_base_build():
    slower = Overrides.build({"inductor.max_fusion_size": 1})
    for day in range(1, 4):
        stored(day, 1.25)
    base = stored(4, 1.25, sha=SHA, label="cu130").build
    variant = stored(4, 1.0, sha=SHA, label="cu130", overrides=slower, seed=41).build
    verdict = build_verdict(build=variant, machine_class="cpu")
    assert (verdict.verdict, verdict.reason, verdict.baseline) == ("regressed", "base_regressed", base), verdict
    assert verdict.message.startswith(f"variant {SHA[:12]}+{variant.local_label} judged against its base build {SHA[:12]}+cu130")
    assert {(f["metric"], f["kind"]) for f in verdict.regressions} >= {("speedup", "regression")}
    # a finding like any other (issue #42): stored with an id, first bad at the variant, last good at its base,
    # the numbers the named comparison gives
    speedup = next(f for f in verdict.regressions if f["metric"] == "speedup")
    stored_finding = Regression.objects.get(pk=speedup["id"])
    assert (stored_finding.first_bad_build, stored_finding.last_good_build, stored_finding.details["rule"]) == (variant, base, "variant")
    named = next(f for f in build_verdict(build=variant, machine_class="cpu", baseline=base).regressions if f["metric"] == "speedup")
    assert (speedup["before"], speedup["after"], speedup["change_text"]) == (named["before"], named["after"], named["change_text"])

    same = stored(4, 1.25, sha=SHA, label="cu130", overrides=Overrides.build({"inductor.coordinate_descent_tuning": True}),
                  seed=42).build
    judged = build_verdict(build=same, machine_class="cpu")  # judged, and within noise: not a detection pass (#46 item 12)
    assert (judged.verdict, judged.reason) == ("pass", "base_no_change") and "judged against its base build" in judged.message


def test_a_variant_without_its_base_is_not_compared_and_gates_409(client):
    variant = stored(4, 1.0, sha=SHA, label="cu130", overrides=Overrides.build({"inductor.max_fusion_size": 1})).build
    verdict = build_verdict(build=variant, machine_class="cpu")
    assert (verdict.verdict, verdict.reason, verdict.baseline) == ("not_compared", "not_tracked", None)
    assert "its base build is not stored; detection does not track variants" in verdict.message
    ref = f"{SHA[:12]}+{variant.local_label}"
    assert client.get("/api/v1/verdict/", {"build": ref}).status_code == 200
    assert client.get("/api/v1/verdict/", {"build": ref, "fail_on_regression": "true"}).status_code == 409


@pytest.mark.parametrize("model, count, expected", [
    ("AMD EPYC", 2, "cpu-amd-epyc-2c"),
    ("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", 16, "cpu-intel-xeon-platinum-8480-16c"),
    ("Apple M2 Pro", 12, "cpu-apple-m2-pro-12c"),
])
def test_the_quick_start_measures_into_a_class_named_from_its_cpu(model, count, expected):
    from contract.vocabulary import is_machine_class

    assert cpu_machine_class(model, count) == expected and is_machine_class(expected)
    assert cpu_machine_class() != "cpu" and is_machine_class(cpu_machine_class())


def test_the_migration_forgets_findings_stored_between_two_copies_of_one_build(same_sha_pair):
    import importlib

    from django.apps import apps

    from dashboard.results.models import Series

    imported, local = same_sha_pair
    series = Series.objects.get()
    earlier = Build.objects.get(git_sha=sha_for(5))
    same = Regression.objects.create(series=series, metric="speedup", finding="change_point", first_bad_build=local,
                                     last_good_build=imported, raised_build=local)
    real = Regression.objects.create(series=series, metric="compiled_latency_ms", finding="change_point",
                                     first_bad_build=local, last_good_build=earlier, raised_build=local)
    Remeasurement.objects.create(series=series, metric="speedup", build=local, baseline_build=imported, regression=same)
    kept = Remeasurement.objects.create(series=series, metric="compiled_latency_ms", build=local, baseline_build=earlier)
    migration = importlib.import_module("dashboard.regressions.migrations.0003_forget_same_build_findings")
    migration.forget(apps, None)
    assert list(Regression.objects.all()) == [real] and list(Remeasurement.objects.all()) == [kept]
