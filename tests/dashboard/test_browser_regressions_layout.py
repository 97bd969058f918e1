"""The regressions board in a real headless Chromium at 1400 px (#17): its tables fit the window
with long workloads, configurations, metrics, build refs and reasons (at 1400 px the table was
1625 px wide and the page scrolled sideways); they wrap inside their columns instead."""
from __future__ import annotations

import pytest

from dashboard.regressions.models import Regression
from dashboard.results.models import Build, Series
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build, sha_for
from tests.documents import make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WORKLOADS = [{"name": "transformer_train_step_with_a_long_name", "phase": "train"}, {"name": "masked_attention", "phase": "infer"}]
LABELS = {1: "cu130.coordinate_descent_tuning.1a2b3c", 2: "cu130.max_fusion_size.4d5e6f.imported"}
REASON = ("started failing: pass -> compile_error: torch._inductor.exc.InductorError: LoweringException: "
          "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1))")


@pytest.fixture
def wide_findings():
    for day in (1, 2):
        ingest_build(day, [make_result(w["name"], regime, mode="max-autotune-no-cudagraphs")
                           for w in WORKLOADS for regime in ("backed", "unbacked")], extra_workloads=WORKLOADS)
        Build.objects.filter(git_sha=sha_for(day)).update(local_label=LABELS[day])
    before, after = (Build.objects.get(git_sha=sha_for(day)) for day in (1, 2))
    Regression.objects.all().delete()
    for series in Series.objects.all():
        common = {"series": series, "first_bad_build": after, "last_good_build": before, "raised_build": after}
        Regression.objects.create(metric="compiled_peak_memory_bytes", finding="change_point", before_value=1.2345e9,
                                  after_value=2.3456e9, magnitude=-0.9, confidence=0.999,
                                  details={"message": "change in a noisy metric compiled_peak_memory_bytes", "noise": 0.219}, **common)
        Regression.objects.create(metric="status", finding="started_failing", before_value=None, after_value=None,
                                  details={"message": REASON, "before": "pass", "after": "compile_error", "reasons": [REASON]}, **common)


def test_the_regressions_tables_fit_a_1400_px_window(browser, live_server, wide_findings):
    page, problems = open_page(browser, live_server.url + "/regressions/?status=all&kind=all",
                               viewport={"width": 1400, "height": 900})
    assert page.locator("table.regressions tr.regression").count() == 8
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    rights = page.evaluate("[...document.querySelectorAll('table.regressions')].map(t => t.getBoundingClientRect().right)")
    assert rights and max(rights) <= width
    # The table fits its container too: nothing hidden behind the container's own scroll bar.
    overflow = page.evaluate("[...document.querySelectorAll('table.regressions')].map(t => t.parentElement.scrollWidth - t.parentElement.clientWidth)")
    assert overflow == [0] * len(overflow)
    assert "max-autotune-no-cudagraphs" in page.inner_text("table.regressions")  # wrapped, not cut
    assert problems == []
