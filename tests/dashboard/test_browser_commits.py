"""Issue #41: a finding's page lists the commits between its builds (which touch C++, which only
Python by area) and, once a bisection over commits ends, names the culprit commit with its values
on both sides; in a real headless Chromium at 1400 px (PTBENCH_SHOTS=<dir> saves the screenshots)."""
from __future__ import annotations

import pytest

from dashboard.regressions.services import commits as commit_services
from dashboard.regressions.services.bisect import bisection_start
from dashboard.regressions.services.commits import commit_range_listed, commit_range_request
from tests.bisect.planted import measure, nightly, no_broker, plant
from tests.bisect.test_bisect_commits import COMMITS, answer, commit_value
from tests.fixtures.browser import open_page
from tests.dashboard.test_browser_noise_rule import shot

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_commits_and_the_culprit_commit_on_the_findings_page(browser, live_server, monkeypatch):
    no_broker(monkeypatch)
    monkeypatch.setattr(commit_services, "_send", lambda row, **kw: None)
    regression = plant(known=(0, 5))
    row = commit_range_request(good=nightly(0), bad=nightly(5), machine_class="cpu")
    url = f"{live_server.url}/regressions/{regression.id}/"
    page, problems = open_page(browser, url, viewport={"width": 1400, "height": 900})
    assert page.locator("#commit-range-summary").inner_text() == "commits: asked of a worker's mirror"
    commit_range_listed(range_id=row.id, answer=answer())
    bisection = measure(bisection_start(regression=regression, kind="commits", requested_by="test", attempts=2),
                        value=commit_value(COMMITS[1]), rounds=6)
    assert bisection.status == "done"
    page.goto(url, wait_until="networkidle")
    shot(page, "commit-bisect-done")
    assert page.locator("#commit-range-summary").inner_text() == (
        "8 commits: 1 touching C++, 7 only Python under torch/ (_inductor 7)")
    rows = page.locator("#commit-range tr.commit")
    assert rows.count() == 8 and rows.nth(3).locator("td").nth(3).inner_text() == "C++ (needs a source build)"
    assert rows.nth(1).get_attribute("class").endswith("culprit") and rows.nth(0).locator("td").nth(3).inner_text() == "Python: _inductor"
    culprit = page.locator("#culprit-commit")
    assert culprit.inner_text() == f"culprit commit {COMMITS[1][:12]} change 1 · Dev 1 · 1.99 before, 2.985 after"
    assert culprit.locator("a").get_attribute("href").endswith(COMMITS[1])
    labels = page.locator("table.bisection tr.bisect-row .override").all_inner_texts()
    assert labels[1] == f"{COMMITS[1][:12]} change 1"  # build 3 (the good end shows no commit of its own) and page.locator("#bisection-result").inner_text().startswith("culprit commit")
    assert not problems
