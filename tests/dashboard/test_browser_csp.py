"""Content-Security-Policy (issue #46 item 11: HTML pages sent none): every HTML answer carries it,
scripts from the site's own files only, and the pages still work under it in headless Chromium: a
violation is a console error, which open_page reports. The chart pages' own browser tests
(test_browser_pages.py and the rest) run under the same header."""
from __future__ import annotations

import pytest

from tests.fixtures.browser import open_page, signed_in_admin
from tests.dashboard.page_history import cases, ingest_build

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_pages_run_their_scripts_under_the_policy_and_an_injected_one_does_not(browser, live_server, django_user_model):
    ingest_build(1, cases(1.25))
    run = ingest_build(2, cases(1.0))["run"]["id"]
    pages = {"/": "#overview-trends[data-drawn=true]", f"/runs/{run}/": "#speedup-chart[data-drawn=true]",
             "/workloads/mlp_loop/": "#series-speedup[data-drawn=true]", "/alerts/": "h1",
             "/api/v1/docs/": ".swagger-ui .info .title", "/admin/login/": "#id_username"}
    for path, drawn in pages.items():
        page, problems = open_page(browser, live_server.url + path)
        page.wait_for_selector(drawn, timeout=15_000)
        policy = page.evaluate("fetch(location.href).then(r => r.headers.get('content-security-policy'))")
        assert policy and "script-src 'self';" in policy and "unsafe-inline' " not in policy.split("style-src")[0], (path, policy)
        # An inline script (as an XSS would inject one) is refused, and says so in the console.
        page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=\"data:,x\" onerror=\"window.__pwned=1\">')")
        page.wait_for_timeout(500)
        assert page.evaluate("window.__pwned") is None, path
        # The admin's pages link no icon: Chromium's own /favicon.ico request is a 404 there (not a page's request).
        problems = [p for p in problems if not (path.startswith("/admin/") and "status of 404" in p)]
        assert [p for p in problems if "Content Security Policy" not in p] == [], (path, problems)
        assert any("Content Security Policy" in p for p in problems), (path, problems)
        page.context.close()
    page, problems = signed_in_admin(browser, live_server, django_user_model, "/admin/results/run/")
    page.click("#changelist-filter a >> nth=1")  # the admin's own scripts (filters, actions) run under the policy
    assert [p for p in problems if "status of 404" not in p] == [], problems
