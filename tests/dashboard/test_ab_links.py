"""A/B links (issue #27 item 4): every A/B link the pages render answers 200, imported variants find
their imported base, and a byte of memory is not a change."""
from __future__ import annotations

import re

import pytest

from contract.variants import Overrides, variant_label
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.ab import NOISE_FLOOR, ab_compare, ab_variants_of
from dashboard.results.models import Build
from dashboard.results.variants import base_of
from tests.dashboard.page_history import ingest_build, sha_for
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db
CDT = Overrides.build({"inductor.coordinate_descent_tuning": True})
FUSION = Overrides.build({"inductor.max_fusion_size": 1})


def document(*, overrides: Overrides | None = None, label: str = "cu130", **metrics) -> dict:
    doc = make_document(results=[make_result("mlp_loop", r, **metrics) for r in ("static", "backed")])
    doc["build"].update(local_label=label)
    if overrides:
        doc["build"].update(overrides=overrides.as_document(), local_label=variant_label(label, overrides))
    return doc


def links(html: str) -> list[str]:
    return [href.replace("&amp;", "&") for href in re.findall(r'href="(/ab/\?[^"]+)"', html)]


def test_imported_variants_find_their_imported_base_and_every_ab_link_answers_200(client):
    # As the quick start imports them: the imported mark after the overrides (cu130.<overrides>.imported).
    for overrides in (None, CDT, FUSION):
        run_ingest_and_detect(document=document(overrides=overrides), imported=True)
    base = Build.objects.get(local_label="cu130.imported")
    variants = Build.objects.exclude(overrides={})
    assert sorted(v.local_label for v in variants) == sorted(
        f"{variant_label('cu130', o)}.imported" for o in (CDT, FUSION))
    assert all(base_of(v) == base for v in variants)
    assert ab_variants_of(base=base) == sorted(variants, key=lambda v: v.local_label)

    listing = client.get("/ab/").content.decode()
    found = links(listing)
    assert len(found) == 2 and all("base=" in href for href in found)
    overview = client.get("/").content.decode()
    badge_links = links(overview)
    assert badge_links and all("base=" in href and "variant=" in href for href in badge_links)
    for href in found + badge_links:
        page = client.get(href)
        assert page.status_code == 200, (href, page.content[:300])
        assert 'class="ab"' in page.content.decode()


def test_a_variant_without_a_stored_base_renders_no_dead_link(client):
    run_ingest_and_detect(document=document(overrides=CDT))
    assert links(client.get("/ab/").content.decode()) == []
    overview = client.get("/").content.decode()
    assert "A/B against its base" not in overview and "its base build is not stored" in overview


def test_a_byte_of_memory_is_no_change_on_a_series_that_never_moved():
    # Memory steady to a few bytes over six builds (the class prior and the series' sd ~1e-6, the
    # band ~0.06 % before the floor), then a variant 0.1 % higher: "no change", not red.
    for day in range(1, 7):
        ingest_build(day, [make_result("mlp_loop", r, compiled_peak_memory_bytes=2_720_000_000 + 3 * (day % 2))
                           for r in ("static", "backed")])
    variant = make_document(git_sha=sha_for(6), results=[
        make_result("mlp_loop", r, compiled_peak_memory_bytes=2_722_720_000) for r in ("static", "backed")])
    variant["build"].update(overrides=CDT.as_document(), local_label=variant_label("", CDT))
    run_ingest_and_detect(document=variant)
    ab = ab_compare(base=Build.objects.get(git_sha=sha_for(6), local_label=""),
                    variant=Build.objects.exclude(overrides={}).get(), machine_class="cpu")
    cells = [row.cells["compiled_peak_memory_bytes"] for row in ab.rows]
    assert [c.change for c in cells] == [pytest.approx(0.001)] * 2
    assert [c.tone for c in cells] == ["same", "same"] and all(c.noise >= NOISE_FLOOR for c in cells)
    assert ab.geomeans[0].cells["compiled_peak_memory_bytes"].tone == "same"
