"""/compare/ at 1,000,000 results (#17): the noise bands of a machine class are computed once per
window of builds and stored (``NoiseBandSet``). A compare served from the stored set judges every
case exactly as the full computation does (the bands of every series from the newest builds up to
the older of the two builds, less the newer), whichever builds are compared; a set whose builds changed since (a re-run
in its window) is computed again, never served; the pipeline stores the new build's set after an
ingest, so the next compare computes nothing."""
from __future__ import annotations

import io
import random

import pytest
from django.core.management import CommandError, call_command

from dashboard.regressions import noise
from dashboard.regressions.colour_reasons import comparison_reasons
from dashboard.regressions.compare import builds_compare_judged
from dashboard.regressions.history import class_series_points
from dashboard.regressions.models import NoiseBandSet
from dashboard.regressions.services import noise_bands as noise_bands_service
from dashboard.regressions.services.noise_bands import noise_bands_fill, noise_bands_refresh
from dashboard.results.models import Build, BuildSummary
from dashboard.results.selectors.common import METRICS
from dashboard.results.selectors.compare import builds_compare, compare_rows_select, compare_summary
from tests.dashboard.page_history import ingest_build, sha_for
from tests.documents import WORKLOADS, make_result

pytestmark = pytest.mark.django_db
REGIMES = ("static", "backed", "unbacked")


def wobbly_history(builds: int = 9, seed: int = 3) -> list[Build]:
    """mlp_loop moves ~10 % from build to build, resnet_train ~1 %; one case fails for a while, one
    gains graph breaks; the samples vary, so the within-run floor differs per build."""
    rng = random.Random(seed)
    for day in range(1, builds + 1):
        results = []
        for w in WORKLOADS:
            spread = 0.10 if w["name"] == "mlp_loop" else 0.01
            for regime in REGIMES:
                failing = w["name"] == "resnet_train" and regime == "unbacked" and 4 <= day <= 5
                result = make_result(w["name"], regime, status="compile_error" if failing else "pass",
                                     speedup=1.5 * (1 + rng.gauss(0, spread)),
                                     compiled_latency_ms=2.0 * (1 + rng.gauss(0, spread)),
                                     compile_time_cold_s=7.5 * (1 + rng.gauss(0, 3 * spread)),
                                     compile_time_warm_s=1.5 * (1 + rng.gauss(0, spread)),
                                     compiled_peak_memory_bytes=int(1e6 * (1 + rng.gauss(0, spread / 10))),
                                     graph_break_count=1 + (day >= 7 and regime == "backed"))
                result["samples"]["compiled_ms"] = [round(2.0 * (1 + rng.gauss(0, 0.03)), 4) for _ in range(5)]
                result["samples"]["eager_ms"] = [round(2.5 * (1 + rng.gauss(0, 0.03)), 4) for _ in range(5)]
                results.append(result)
        ingest_build(day, results)
    return list(Build.objects.order_by("ordered_at"))


def full_bands(*, base: Build, head: Build, machine_class: str = "cpu"):
    """The bands as /compare/ computes them without the stored sets: every series' points over the
    newest builds up to the older of the two less the newer, the noise of their repeated runs of one
    build, else the class's prior of repeated runs (model 6: never the differences between builds)."""
    if (head.ordered_at, head.id) < (base.ordered_at, base.id):  # a head older than its base (these histories: inside its window)
        base, head = head, base
    builds = list(BuildSummary.objects.filter(machine_class=machine_class, ordered_at__lte=base.ordered_at)
                  .exclude(build_id=head.id).order_by("-ordered_at", "-build_id")
                  .values_list("build_id", flat=True)[:noise.PRIOR_BUILDS])
    points = class_series_points(build_ids=builds, machine_class=machine_class)
    priors = noise._repeat_priors(points, [m.name for m in METRICS if m.noisy])
    return lambda series_id: noise.points_noise_bands(points.get(series_id, []), metrics=METRICS, priors=priors)


def full_compare(*, base: Build, head: Build, **kwargs):
    """``builds_compare`` over ``full_bands``, each coloured change with its finding or reason."""
    bands = full_bands(base=base, head=head)
    comparison = builds_compare(base=base, head=head, machine_class="cpu", noise_bands=bands, **kwargs)
    comparison_reasons(comparison, bands=bands)
    return comparison


def judgments(comparison, only: str = "all") -> tuple:
    rows = compare_rows_select(rows=comparison.rows, only=only, sort="speedup")
    return ([(r.series_id, sorted(r.flags), {name: vars(c) for name, c in r.changes.items()}) for r in rows],
            {name: vars(c) for name, c in compare_summary(rows=rows).items()})


def no_computation(*args, **kwargs):
    raise AssertionError("the stored bands should have been read, not computed")


@pytest.mark.parametrize("base_day, head_day", [(8, 9), (2, 9), (5, 6), (9, 3), (6, 6)])
@pytest.mark.parametrize("metric, threshold", [("speedup", 0.05), ("compile_time_cold_s", 0.02)])
def test_the_stored_bands_judge_every_case_as_the_full_computation(base_day, head_day, metric, threshold, monkeypatch):
    builds = wobbly_history()
    base, head = builds[base_day - 1], builds[head_day - 1]
    expected = full_compare(base=base, head=head, metric=metric, threshold=threshold)

    computed = builds_compare_judged(base=base, head=head, machine_class="cpu", metric=metric, threshold=threshold)
    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    stored = builds_compare_judged(base=base, head=head, machine_class="cpu", metric=metric, threshold=threshold)

    assert NoiseBandSet.objects.count() == 1
    assert any(c.tone == "same" for r in expected.rows for c in r.changes.values())  # some changes are within noise
    for only in ("all", "regressed", "improved", "new_failures", "new_graph_breaks"):
        assert judgments(computed, only) == judgments(stored, only) == judgments(expected, only)


def test_a_head_newer_than_its_base_shares_the_bases_set():
    builds = wobbly_history()
    builds_compare_judged(base=builds[7], head=builds[8], machine_class="cpu")  # head newer: not in the window
    builds_compare_judged(base=builds[7], head=builds[-1], machine_class="cpu")
    assert list(NoiseBandSet.objects.values_list("upto", "without")) == [(builds[7].id, None)]


def test_a_head_older_than_its_base_reads_its_own_stored_set_as_the_compare_the_other_way_round(monkeypatch):
    """Issue #46 item 13: a head older than its base, inside the base's window, was judged by the
    base's window less the head, a window no fill stores (8-18 s at 1,000,000 results). It reads the
    head's own set: the noise known up to the older build, without the newer, stored for every build."""
    builds = wobbly_history()
    noise_bands_fill(budget_s=60)
    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    for base, head in ((builds[7], builds[2]), (builds[8], builds[7])):
        older_head = builds_compare_judged(base=base, head=head, machine_class="cpu")
        assert judgments(older_head) == judgments(full_compare(base=base, head=head))
        reversed_bands = noise_bands_service.noise_bands_for_compare(machine_class="cpu", base=head, head=base)
        bands = noise_bands_service.noise_bands_for_compare(machine_class="cpu", base=base, head=head)
        assert all(repr(bands(s)) == repr(reversed_bands(s)) for s in {r.series_id for r in older_head.rows})
    assert not NoiseBandSet.objects.exclude(without=None).exists()


def test_a_set_whose_window_changed_is_computed_again(monkeypatch):
    builds = wobbly_history()
    base, head = builds[-2], builds[-1]
    before = builds_compare_judged(base=base, head=head, machine_class="cpu")
    # A re-run of a build inside the base's window, far off its series: the bands change.
    ingest_build(5, [make_result("resnet_train", regime, speedup=3.0, compile_time_cold_s=20.0) for regime in REGIMES])

    after = builds_compare_judged(base=base, head=head, machine_class="cpu")
    expected = full_compare(base=base, head=head)
    assert judgments(after) == judgments(expected) != judgments(before)
    assert NoiseBandSet.objects.count() == 1  # the set of that window, replaced

    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    assert judgments(builds_compare_judged(base=base, head=head, machine_class="cpu")) == judgments(expected)


def test_the_pipeline_stores_the_new_builds_bands_so_the_next_compare_computes_nothing(
        client, monkeypatch, django_capture_on_commit_callbacks):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)  # detection and the bands task in this process
    wobbly_history(builds=6)
    with django_capture_on_commit_callbacks(execute=True):  # detection, then the noise bands task
        ingest_build(7, [make_result(w["name"], regime, speedup=1.4) for w in WORKLOADS for regime in REGIMES])
    new = Build.objects.get(git_sha=sha_for(7))
    # the new build's and the one before, then every other build that can be a base (issue #46 item 13)
    assert sorted(NoiseBandSet.objects.values_list("upto", "without")) == [(b.id, None) for b in Build.objects.order_by("id")]
    assert new.id in NoiseBandSet.objects.values_list("upto", flat=True)

    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    assert client.get("/compare/").status_code == 200  # the new build against the one before
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(8, [make_result(w["name"], regime, speedup=1.3) for w in WORKLOADS for regime in REGIMES])
    assert client.get("/compare/?filter=regressed").status_code == 200  # the next build against the new one


def test_every_build_gets_its_set_and_a_late_run_drops_the_stale_ones_after_it(monkeypatch):
    """Issue #46 item 13: a compare against any base reads stored bands (one whose base had none
    took 7.8-8.0 s at 1,000,000 results). The beat sweep stores every build's set; a re-run of an
    older build drops the sets after it that it changed, and the next sweep stores them again."""
    builds = wobbly_history(builds=6)
    assert noise_bands_fill(budget_s=60) == {"computed": 6, "missing": 0}
    assert sorted(NoiseBandSet.objects.values_list("upto", flat=True)) == sorted(b.id for b in builds)

    document = ingest_build(3, [make_result("resnet_train", regime, speedup=3.0, compile_time_cold_s=20.0) for regime in REGIMES])
    outcome = noise_bands_refresh(run_id=document["run"]["id"])
    assert outcome["computed"] == [builds[2].id] and sorted(outcome["dropped"]) == sorted(b.id for b in builds[3:])
    out = io.StringIO()
    call_command("noise_bands_fill", stdout=out)  # what the sweep does, at once
    assert out.getvalue() == "3 build(s) given their noise bands; 0 still without\n"
    with pytest.raises(CommandError, match="--budget-s"):
        call_command("noise_bands_fill", "--budget-s", "0")

    expected = full_compare(base=builds[4], head=builds[5])
    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    assert judgments(builds_compare_judged(base=builds[4], head=builds[5], machine_class="cpu")) == judgments(expected)


def stored_is_computed(base: Build, machine_class: str = "cpu") -> bool:
    """The base's stored set is fresh (its window's inputs unchanged) and holds, to the bit, what a
    compare against it would compute on request (``window_noise_bands``, each series read alone)."""
    window = noise.band_window(machine_class=machine_class, upto=base, without_build=None, metrics=METRICS)
    stored = noise_bands_service._stored(window)
    computed = noise.window_noise_bands(window=window, metrics=[m for m in METRICS if m.noisy])
    return stored is not None and repr(stored) == repr(computed)


def test_a_late_run_leaves_every_base_with_current_bands_after_its_ingest(monkeypatch, django_capture_on_commit_callbacks):
    """Issue #46 item 13: the post-ingest task keeps every base's bands current itself (a re-run of
    an older build changes the windows after it: they are computed again there, not by a compare
    or the next sweep), each stored set the on-request computation's to the bit, read from the
    class's points once per build (``WindowPoints``) for the windows that share them."""
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    builds = wobbly_history(builds=6)
    assert not NoiseBandSet.objects.exists()  # bulk-like: stored without the pipeline
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(3, [make_result("resnet_train", regime, speedup=3.0, compile_time_cold_s=20.0) for regime in REGIMES])
    assert all(stored_is_computed(b) for b in builds)
    changed = {b.id: NoiseBandSet.objects.get(upto=b, without=None).inputs for b in builds}

    with django_capture_on_commit_callbacks(execute=True):  # another late run of that build
        ingest_build(3, [make_result("mlp_loop", regime, speedup=0.5, compile_time_cold_s=30.0) for regime in REGIMES])
    assert all(stored_is_computed(b) for b in builds)
    after = {b.id: NoiseBandSet.objects.get(upto=b, without=None).inputs for b in builds}
    assert [b.id for b in builds if after[b.id] != changed[b.id]] == [b.id for b in builds[2:]]  # its window and the later ones

    monkeypatch.setattr("dashboard.regressions.services.noise_bands.window_noise_bands", no_computation)
    for base in builds[:-1]:  # a compare against any base reads its set
        assert judgments(builds_compare_judged(base=base, head=builds[-1], machine_class="cpu")) == \
            judgments(full_compare(base=base, head=builds[-1]))
