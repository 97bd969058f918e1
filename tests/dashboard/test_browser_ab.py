"""The A/B page (issue #16) in a real headless Chromium: figures in cells, "no change" within noise."""
from __future__ import annotations

import os

import pytest

from contract.variants import Overrides, variant_label
from dashboard.results.services import run_ingest
from tests.fixtures.browser import open_page
from tests.documents import make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_ab_page_shows_figures_and_no_change_within_noise(browser, live_server):
    base = make_document(results=[make_result("mlp_loop", "static"), make_result("mlp_loop", "backed")])
    variant = make_document(results=[make_result("mlp_loop", "static", speedup=1.251),  # within its noise
                                     make_result("mlp_loop", "backed", speedup=1.6)])  # past it
    overrides = Overrides.build({"inductor.coordinate_descent_tuning": True})
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    run_ingest(document=base)
    run_ingest(document=variant)
    ref = f"{base['build']['git_sha'][:12]}+{variant['build']['local_label']}"

    page, problems = open_page(browser, f"{live_server.url}/ab/")
    page.click(f"#ab-variants a:has-text('{ref}')")  # the variant list links each variant to its A/B
    page.wait_for_selector("table.ab")
    assert "base=" in page.url and "variant=" in page.url
    cells = page.locator("table.ab tr.case td[data-metric=speedup]")
    assert cells.count() == 2
    changed, unchanged = sorted(cells.all_inner_texts(), key=lambda text: "no change" in text)
    assert "1.250× → 1.600×" in changed and "+28.0%" in changed and "±5.5%" in changed  # 1.96 x sqrt(2) x the 2 % default
    assert "1.250× → 1.251×" in unchanged and "no change" in unchanged
    assert page.locator("table.ab tr.case td.same[data-metric=speedup]").count() == 1
    page.check("input[name=changed]")
    page.click("#ab-filters button")
    page.wait_for_url("**changed=1**")
    assert page.locator("table.ab tr.case").count() == 1  # only the changed case, state in the URL
    assert problems == []


def test_the_home_pages_ab_link_opens_the_imported_variant_against_its_imported_base(browser, live_server):
    # As the quick start imports the H100 history: base cu130.imported, variant cu130.<overrides>.imported;
    # the link answered 400 ("has no stored base build") before (issue #27 item 4).
    base = make_document(results=[make_result("mlp_loop", "static", compiled_peak_memory_bytes=2_720_000_000)])
    variant = make_document(results=[make_result("mlp_loop", "static", compiled_peak_memory_bytes=2_722_000_000)])
    overrides = Overrides.build({"inductor.max_fusion_size": 1})
    base["build"].update(local_label="cu130")
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("cu130", overrides))
    run_ingest(document=base, imported=True)
    run_ingest(document=variant, imported=True)

    page, problems = open_page(browser, f"{live_server.url}/")
    page.click("a.ab-link")
    page.wait_for_selector("table.ab")
    assert page.locator("#ab-heading strong").inner_text() == "cf30153c4c13+cu130.imported"
    memory = page.locator("table.ab tr.case td[data-metric=compiled_peak_memory_bytes]").inner_text()
    assert "2.72 GB → 2.72 GB" in memory and "no change" in memory  # +0.07 %: within the 0.55 % floor
    assert problems == []


def test_a_variants_finding_is_linked_from_its_cell_with_the_verdicts_numbers(browser, live_server):
    """Issue #42: a variant's regression is a stored finding (an id, on /regressions/), and its /ab/ cell
    shows that finding's numbers, the verdict's, linked to it; a cell within noise stays 'no change'."""
    import random

    from dashboard.regressions.selectors import build_verdict
    from dashboard.regressions.services import detection_run
    from dashboard.results.models import Run
    from tests.dashboard.page_history import sha_for
    from tests.regressions.history import case

    rng = random.Random(4)
    sha = sha_for(9)
    documents = [make_document(git_sha=sha_for(day), results=[case(1.25, rng=rng), case(1.25, regime="backed", rng=rng)])
                 for day in (1, 2, 3)]
    documents.append(make_document(git_sha=sha, results=[case(1.25, rng=rng), case(1.25, regime="backed", rng=rng)]))
    variant = make_document(git_sha=sha, results=[case(1.251, rng=rng), case(0.70, regime="backed", rng=rng)])
    overrides = Overrides.build({"inductor.max_fusion_size": 1})
    variant["build"].update(overrides=overrides.as_document(), local_label=variant_label("", overrides))
    for day, document in enumerate([*documents, variant], start=1):
        document["build"]["commit_time"] = f"2026-11-{min(day, 4):02d}T00:00:00+00:00"
        run_ingest(document=document)
        detection_run(run_id=document["run"]["id"])
    build = Run.objects.get(pk=variant["run"]["id"]).build
    verdict = build_verdict(build=build, machine_class="cpu")
    assert verdict.verdict == "regressed", verdict
    finding = next(f for f in verdict.regressions if f["metric"] == "speedup")
    assert finding["id"] is not None and "backed" in finding["config"]

    page, problems = open_page(browser, f"{live_server.url}/ab/?base={sha[:12]}&variant={sha[:12]}%2B{variant['build']['local_label']}",
                               viewport={"width": 1400, "height": 900})
    cell = page.locator(f"table.ab tr.case td[data-metric=speedup][data-finding='{finding['id']}']")
    assert cell.count() == 1 and cell.locator("a.finding-link").inner_text() == f"finding {finding['id']}"
    assert finding["change_text"] in cell.inner_text()
    assert "no change" in page.locator("table.ab tr.case td.same[data-metric=speedup]").inner_text()
    assert "not a finding" not in page.locator("table.ab tr.geomean").all_inner_texts()[0]  # a pooled row is never one
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "ab-variant-finding.png"), full_page=True)
    cell.locator("a.finding-link").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/regressions/{finding['id']}/")
    assert problems == []
