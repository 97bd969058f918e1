"""#34 item 3 in a real headless Chromium: the pages say size where they meant it (home's empty-state
command and recent runs, the run page's title, the admin's run request, the alerts page's subscription
filters). With PTBENCH_SHOTS=<dir> the pages are also saved as screenshots there."""
from __future__ import annotations

import pytest

from dashboard.alerts.services import subscription_create
from dashboard.results.models import Build, Run
from dashboard.results.services import run_ingest
from tests.fixtures.browser import open_page, signed_in_admin
from tests.dashboard.test_browser_noise_rule import shot
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
VIEW = {"width": 1400, "height": 900}


def test_home_and_the_run_page_say_size(browser, live_server):
    page, problems = open_page(browser, f"{live_server.url}/", viewport=VIEW)
    shot(page, "home-empty-size")
    assert page.locator("pre").first.inner_text() == "python -m runner run --size tiny"
    document = make_document()
    run_ingest(document=document)
    page.goto(f"{live_server.url}/", wait_until="networkidle")
    shot(page, "home-runs-size")
    runs = page.locator("table.runs")
    assert runs.locator("thead th").nth(1).inner_text() == "size"
    assert runs.locator("tbody tr").first.locator("td").nth(1).inner_text() == "tiny"
    page.goto(f"{live_server.url}/runs/{document['run']['id']}/", wait_until="networkidle")
    shot(page, "run-size")
    assert page.locator("h1").inner_text() == "tiny size · torch 2.13.0 (cf30153c4c13) · cpu"
    assert problems == []


def test_the_admin_requests_a_run_by_size_and_alerts_filter_by_size(browser, live_server, django_user_model):
    run_ingest(document=make_document())
    build = Build.objects.get()
    subscription_create(name="full runs", channel="email", target="oncall@bench.test", sizes=["full"])
    page, problems = signed_in_admin(browser, live_server, django_user_model, "/admin/results/build/", viewport=VIEW)
    page.check(f"input.action-select[value='{build.pk}']")
    page.select_option("select[name=action]", "request_runs")
    page.click("button[name=index]")
    page.wait_for_selector("#run-form")
    assert page.locator("#run-form label[for=id_size]").inner_text().rstrip(":").lower() == "size"
    assert page.locator("#id_size option").all_inner_texts() == ["tiny", "full"] and page.locator("#id_suite").count() == 0
    page.fill("#id_machine_class", "cpu")
    page.select_option("#id_size", "tiny")
    page.fill("#id_workloads", "mlp_loop")
    shot(page, "admin-request-size")
    page.click("input[name=apply]")
    page.wait_for_selector(".messagelist")
    requested = Run.objects.exclude(matrix={}).get()
    assert requested.size == "tiny" and "--size tiny" in requested.command
    page.goto(f"{live_server.url}/alerts/", wait_until="networkidle")
    shot(page, "alerts-sizes")
    assert "sizes full;" in page.locator("#subscriptions tr[data-id]").first.inner_text()
    assert page.locator("#subscription-form label[for=id_sizes]").count() == 1
    assert page.locator("#subscription-form label[for=id_suites]").count() == 0
    # As in test_browser_variant_admin: the admin's pages ask the live server for one resource it lacks.
    assert [p for p in problems if not p.startswith("console error: Failed to load resource")] == [] and len(problems) <= 1
