"""/compare/'s judged comparison of a class's latest pair, stored (issue #46 item 13: judging it cost
a cold /compare/ ~0.5 s at 1,000,000 results): the pipeline stores it after an ingest, the page reads
it and renders the same bytes as judging on request; a later ingest, a late run or a triage that
changes what it was judged from makes it judged again, never served stale."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from dashboard.regressions.compare import builds_compare_judged
from dashboard.regressions.models import CompareCellSet, Regression
from dashboard.regressions.services.compare_cells import compare_judged
from dashboard.results.models import Build
from tests.dashboard.page_history import ingest_build, sha_for
from tests.dashboard.test_compare_stored_bands import REGIMES, judgments, wobbly_history
from tests.documents import WORKLOADS, make_result

pytestmark = pytest.mark.django_db
PAGES = ("/compare/", "/compare/?filter=regressed&sort=speedup", "/compare/?format=csv")


def never_judged(*args, **kwargs):
    raise AssertionError("the stored comparison should have been read, not judged")


def same(stored, judged) -> bool:
    """Every cell, flag, finding, reason, one-sided case and the geomean row, to the bit."""
    return (judgments(stored) == judgments(judged) and stored.only_base == judged.only_base
            and stored.only_head == judged.only_head and [r.cfg for r in stored.rows] == [r.cfg for r in judged.rows])


def pages(client) -> list[bytes]:
    out = []
    for url in PAGES:
        cache.clear()
        response = client.get(url)
        assert response.status_code == 200
        out.append(response.content)
    return out


def test_the_pipeline_stores_the_latest_pairs_comparison_and_the_page_reads_the_same_bytes(
        client, monkeypatch, django_capture_on_commit_callbacks):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)  # detection and the bands task in this process
    wobbly_history(builds=6)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(7, [make_result(w["name"], regime, speedup=1.2, compile_time_cold_s=9.0) for w in WORKLOADS for regime in REGIMES])
    base, head = Build.objects.get(git_sha=sha_for(6)), Build.objects.get(git_sha=sha_for(7))
    assert list(CompareCellSet.objects.values_list("machine_class", "base", "head")) == [("cpu", base.id, head.id)]

    judged = builds_compare_judged(base=base, head=head, machine_class="cpu")
    assert any(c.tone == "worse" for r in judged.rows for c in r.changes.values())  # something to colour and explain
    monkeypatch.setattr("dashboard.regressions.services.compare_cells.builds_compare_judged", never_judged)
    assert same(compare_judged(base=base, head=head, machine_class="cpu"), judged)
    from_stored = pages(client)
    monkeypatch.undo()
    CompareCellSet.objects.all().delete()
    assert pages(client) == from_stored  # the page judged on request: byte for byte


def test_a_new_ingest_a_late_run_and_a_triage_have_it_judged_again(client, monkeypatch, django_capture_on_commit_callbacks):
    from dashboard.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)
    wobbly_history(builds=6)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_build(7, [make_result(w["name"], regime, speedup=1.2) for w in WORKLOADS for regime in REGIMES])
        ingest_build(8, [make_result(w["name"], regime, speedup=0.6) for w in WORKLOADS for regime in REGIMES])
    b7, b8 = Build.objects.get(git_sha=sha_for(7)), Build.objects.get(git_sha=sha_for(8))
    stored = CompareCellSet.objects.get()
    assert (stored.base_id, stored.head_id) == (b7.id, b8.id)  # the new latest pair
    assert same(compare_judged(base=b7, head=b8, machine_class="cpu"), builds_compare_judged(base=b7, head=b8, machine_class="cpu"))

    with django_capture_on_commit_callbacks(execute=True):  # a late run of the base: its cases and window change
        ingest_build(7, [make_result("mlp_loop", regime, speedup=3.0) for regime in REGIMES])
    assert CompareCellSet.objects.get().inputs != stored.inputs  # judged again by the pipeline
    assert same(compare_judged(base=b7, head=b8, machine_class="cpu"), builds_compare_judged(base=b7, head=b8, machine_class="cpu"))

    row, metric = compare_judged(base=b7, head=b8, machine_class="cpu").rows[0], "speedup"
    finding = Regression.objects.create(series_id=row.series_id, metric=metric, finding=Regression.Finding.CHANGE_POINT,
                                        first_bad_build=b8, last_good_build=b7, raised_build=b8)  # detection's, later
    linked = compare_judged(base=b7, head=b8, machine_class="cpu")  # judged again on request, then stored
    assert [r.changes[metric].finding for r in linked.rows if r.series_id == row.series_id] == [finding.id]
    finding.status = Regression.Status.INVALID  # a triage: no finding to link any more
    finding.save(update_fields=["status"])
    judged = builds_compare_judged(base=b7, head=b8, machine_class="cpu")
    served = compare_judged(base=b7, head=b8, machine_class="cpu")
    assert same(served, judged) and not any(c.finding for r in served.rows for c in r.changes.values())
    monkeypatch.setattr("dashboard.regressions.services.compare_cells.builds_compare_judged", never_judged)
    assert same(compare_judged(base=b7, head=b8, machine_class="cpu"), judged)
    # another pair, metric or threshold is judged on request, never served the stored one
    assert compare_judged(base=b7, head=b8, machine_class="cpu", threshold=0.05) is not None
    with pytest.raises(AssertionError, match="not judged"):
        compare_judged(base=b7, head=b8, machine_class="cpu", metric="compile_time_cold_s")
