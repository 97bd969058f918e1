"""A coloured change's reason counts the builds before the head that measured its series (issue #46
item 13: a grouped read of every such series' whole history was 76 ms of a cold /compare/ at
1,000,000 results). The read covers the class's newest builds first and counts up to
``YOUNG_BUILDS`` + 1 (no reason tells a count past it); a series fewer of those builds measured is
counted over its whole history: every reason is the whole history's."""
from __future__ import annotations

import pytest
from django.db.models import Count, Max

from dashboard.regressions import colour_reasons
from dashboard.regressions.compare import builds_compare_judged
from dashboard.results.models import Build, Result, Series
from detection import YOUNG_BUILDS
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def whole_history(*, series_ids, before, machine_class):
    """The reasons' counts as read before: every build before ``before`` that measured the series."""
    rows = (Result.objects.filter(series_id__in=series_ids, build__ordered_at__lt=before).values("series_id")
            .annotate(n=Count("build_id", distinct=True), at=Max("build__ordered_at")).values_list("series_id", "n", "at"))
    return {s: n for s, n, _ in rows}, {s: at for s, _, at in rows}


def history() -> list[Build]:
    """mlp_loop every build; resnet_train on builds 1, 2, 5 and 6 (none in 3 and 4), its speedup
    doubled on 6; mlp_loop's halved on 6."""
    for day in range(1, 7):
        results = [make_result("mlp_loop", regime, speedup=0.6 if day == 6 else 1.25) for regime in ("static", "backed")]
        if day not in (3, 4):
            results += [make_result("resnet_train", regime, speedup=2.5 if day == 6 else 1.25) for regime in ("static", "backed")]
        ingest_build(day, results)
    return list(Build.objects.order_by("ordered_at"))


def test_counts_past_young_builds_are_capped_and_the_rest_are_the_whole_historys():
    builds = history()
    series = list(Series.objects.values_list("id", flat=True))
    head = builds[-1]
    counts, newest = colour_reasons._history(series_ids=series, before=head.ordered_at, machine_class="cpu")
    full_counts, full_newest = whole_history(series_ids=series, before=head.ordered_at, machine_class="cpu")
    assert newest == full_newest
    mlp = set(Series.objects.filter(workload__name="mlp_loop").values_list("id", flat=True))
    assert {counts[s] for s in mlp} == {YOUNG_BUILDS + 1} and {full_counts[s] for s in mlp} == {5}  # read in 3 builds, not 5
    # resnet_train: 1 of the newest 3 builds, so its whole history (3 builds): not young
    assert all(counts[s] == full_counts[s] == 3 for s in series if s not in mlp)


def test_every_reason_is_the_whole_historys(monkeypatch):
    builds = history()
    for base in builds[:-1]:
        fast = builds_compare_judged(base=base, head=builds[-1], machine_class="cpu")
        with monkeypatch.context() as patched:
            patched.setattr(colour_reasons, "_history", whole_history)
            slow = builds_compare_judged(base=base, head=builds[-1], machine_class="cpu")
        reasons = [(r.series_id, r.status_reason, sorted((k, c.reason, c.finding) for k, c in r.changes.items())) for r in fast.rows]
        assert reasons == [(r.series_id, r.status_reason, sorted((k, c.reason, c.finding) for k, c in r.changes.items()))
                           for r in slow.rows]
        assert any(c.reason for r in fast.rows for c in r.changes.values())
