"""/dynamic/'s trends read each build's marks (a failed side, a gap's quiet word, backed on every
dim) stored with its ``DynamicSummary`` by ingest, instead of judging every pair of every build in
range per request (issue #46 item 13: about half of a cold /dynamic/ at 1,000,000 results). The
stored marks are the computed ones, the page the same bytes; a row without them, or marked by
another version, is marked from its pairs on request."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from dashboard.results.models import DynamicSummary
from dashboard.results.selectors import dynamic
from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def pair(workload: str, gap: float, noise: float = 0.01, status: str = "pass") -> list[dict]:
    return [make_result(workload, "backed", speedup=2.0, speedup_noise=noise),
            make_result(workload, "unbacked", status=status, speedup=2.0 * gap if status == "pass" else None, speedup_noise=noise)]


def history() -> None:
    ingest_build(1, pair("mlp_loop", 0.9, noise=0.3) + pair("resnet_train", 1.0, status="compile_error"))  # within noise; failed
    ingest_build(2, pair("mlp_loop", 0.9, noise=1.74) + pair("resnet_train", 0.5))  # too noisy to track; worse
    ingest_build(3, pair("mlp_loop", 1.0) + pair("resnet_train", 1.2, noise=0.3))


def trends() -> list[tuple]:
    gaps = dynamic.dynamic_gaps(machine_class="cpu", mode="default", dtype="float32", since=None)
    return [(b.build_id, b.gaps, b.failed, b.quiet, b.backed_every_dim, b.geomean_gap) for b in gaps.builds]


def page(client) -> bytes:
    cache.clear()  # the page cache: rendered anew
    return client.get("/dynamic/?range=all").content


def test_ingest_stores_each_builds_marks_and_the_trends_read_them_unjudged(client, monkeypatch):
    history()
    rows = list(DynamicSummary.objects.order_by("ordered_at"))
    assert rows and all(r.marks == dynamic.pairs_marks(r.pairs) for r in rows)
    assert rows[0].marks["version"] == dynamic.MARKS_VERSION
    words = {w for r in rows for w in r.marks["quiet"].values()}
    assert words == {"within noise", "too noisy to track"} and any(r.marks["failed"] for r in rows)
    stored_trends, stored_page = trends(), page(client)

    DynamicSummary.objects.update(marks=None)  # as rows stored before the marks were: marked from their pairs
    assert trends() == stored_trends and page(client) == stored_page

    def no_judging(pairs):
        raise AssertionError("the stored marks should have been read, not judged")

    for r in rows:
        DynamicSummary.objects.filter(pk=r.pk).update(marks=dynamic.pairs_marks(r.pairs))
    monkeypatch.setattr(dynamic, "pairs_marks", no_judging)
    assert trends() == stored_trends and page(client) == stored_page


def test_marks_of_another_version_are_not_read():
    history()
    judged = trends()
    stale = {"version": dynamic.MARKS_VERSION - 1, "failed": {"mlp_loop": "backed oom"}, "quiet": {}, "every_dim": ["mlp_loop"]}
    DynamicSummary.objects.update(marks=stale)
    assert trends() == judged
