"""The regression page's "Bisect" and "Cancel" buttons (docs/bisect.md), in a real headless Chromium at
1400 px (PTBENCH_SHOTS=<dir> saves the screenshots): a signed-in user with the bisection permissions
starts one with the button and sees its runs requested; anonymous users and users without the
permission get no button and no bisection. Bad input is answered as the API answers it: 400 naming
the field, 409 naming ``status`` while one runs, nothing written. The workers are the test's
(tests/bisect/planted.py): six builds, only the first and the last measured."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from dashboard.regressions.models import Bisection
from tests.bisect.planted import no_broker, plant
from tests.fixtures.browser import open_page, signed_in_admin
from tests.dashboard.test_browser_noise_rule import shot

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WIDE = {"width": 1400, "height": 900}


def test_a_signed_in_user_bisects_with_the_button_and_cancels_it(browser, live_server, django_user_model, monkeypatch):
    sent = no_broker(monkeypatch)
    regression = plant()
    path = f"/regressions/{regression.id}/"
    anonymous, problems = open_page(browser, f"{live_server.url}{path}", viewport=WIDE)
    assert anonymous.locator("#bisect-button").count() == 0 and anonymous.locator("#bisect-cancel").count() == 0
    assert anonymous.locator("#bisect-sign-in").inner_text() == "Sign in to bisect from this page."
    assert problems == []

    page, problems = signed_in_admin(browser, live_server, django_user_model, path, viewport=WIDE)
    problems.clear()  # the admin's login page has no favicon link: Chromium's /favicon.ico is 404
    page.reload(wait_until="networkidle")
    assert page.locator("#bisection-none").is_visible()
    shot(page, "bisect-button")
    page.fill("#bisect-form input[name=attempts]", "3")
    page.click("#bisect-button")
    page.wait_for_url(f"**{path}")
    shot(page, "bisect-button-started")
    bisection = Bisection.objects.get(regression=regression)
    assert (bisection.status, bisection.attempts, bisection.requested_by) == ("running", 3, "admin")
    assert page.locator("#messages").inner_text() == f"bisection of regression {regression.id} started"
    assert page.locator("#bisection .bisection-status").inner_text() == "running"
    summary = page.locator("#bisection > p").first.inner_text()
    assert "6 builds, 4 still between good and bad · 6 runs (6 open)" in summary and "started by admin" in summary
    assert len(sent) == 6  # both ends, three attempts each, on the class's queue
    assert page.locator("#bisect-button").count() == 0  # one at a time: the button gives way to Cancel

    page.click("#bisect-cancel")
    page.wait_for_url(f"**{path}")
    bisection.refresh_from_db()
    assert bisection.status == "cancelled"
    assert page.locator("#bisection .bisection-status").inner_text() == "cancelled"
    assert page.locator("#bisect-cancel").count() == 0 and page.locator("#bisect-button").is_visible()
    assert problems == []


def test_bad_input_and_missing_permission_are_refused_naming_the_field(client, django_user_model, monkeypatch):
    no_broker(monkeypatch)
    regression = plant()
    url = f"/regressions/{regression.id}/bisect/"
    assert client.post(url, {"kind": "builds"}).status_code == 302  # anonymous: to the sign-in page
    user = django_user_model.objects.create_user("viewer", password="pw")
    client.force_login(user)
    page = client.get(f"/regressions/{regression.id}/").content.decode()
    assert 'id="bisect-button"' not in page
    assert client.post(url, {"kind": "builds"}).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="add_bisection"))
    client.force_login(django_user_model.objects.get(pk=user.pk))
    assert 'id="bisect-button"' in client.get(f"/regressions/{regression.id}/").content.decode()

    bad = client.post(url, {"kind": "builds", "attempts": "0"})
    assert bad.status_code == 400 and "<strong>attempts</strong>: Ensure this value is greater than or equal to 1." in bad.content.decode()
    bad = client.post(url, {"kind": "sideways"})
    assert bad.status_code == 400 and "<strong>kind</strong>" in bad.content.decode()
    bad = client.post(url, {"attempts": "3", "max_attempts": "2"})
    assert bad.status_code == 400 and "<strong>max_attempts</strong>: must be at least attempts (3)" in bad.content.decode()
    assert not Bisection.objects.exists()

    assert client.post(url, {"kind": "builds"}).status_code == 302
    again = client.post(url, {"kind": "builds"})
    assert again.status_code == 409 and "<strong>status</strong>" in again.content.decode()
    assert Bisection.objects.count() == 1
    assert client.post(f"/regressions/{regression.id}/bisect/cancel/").status_code == 403  # cancelling is change_bisection
    assert client.get(url).status_code == 405
    assert client.post("/regressions/999999/bisect/").status_code == 404
