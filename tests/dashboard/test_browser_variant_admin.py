"""The admin makes build variants too (issue #16), in a real headless Chromium: *Builds* -> select
a base -> *Create a variant*; a key the base build's torch lacks is refused naming it, nothing stored."""
from __future__ import annotations

import os

import pytest

from contract.variants import Overrides, variant_label
from dashboard.results.models import Build
from dashboard.results.services import run_ingest
from tests.fixtures.browser import signed_in_admin
from tests.dashboard.test_variants import CATALOG
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("PTBENCH_SCREENSHOTS", "")  # a folder: the test leaves its screenshots there


def open_variant_form(browser, live_server, django_user_model, base: Build):
    """Signed in as a superuser, the admin's *Create a variant* form of ``base``: (page, problems)."""
    page, problems = signed_in_admin(browser, live_server, django_user_model, "/admin/results/build/")
    page.check(f"input.action-select[value='{base.pk}']")
    page.select_option("select[name=action]", "create_variant")
    page.click("button[name=index]")
    page.wait_for_selector("#variant-form")
    return page, problems


def test_admin_creates_a_variant_and_names_a_bad_key(browser, live_server, django_user_model, tmp_path):
    run_ingest(document=make_document())
    base = Build.objects.get()
    Build.objects.filter(pk=base.pk).update(config_catalog=CATALOG)  # as a probe recorded it
    page, problems = open_variant_form(browser, live_server, django_user_model, base)

    page.fill("#id_config", "inductor.max_autotune=true\ninductor.no_such_key=1")
    page.click("input[name=apply]")
    page.wait_for_selector("#variant-form .errorlist")
    errors = page.locator("#variant-form .errorlist").all_inner_texts()
    page.screenshot(path=str(tmp_path / "variant-error.png"), full_page=True)
    assert any("config.inductor.no_such_key: torch 2.13.0 has no inductor config key 'no_such_key'" in e for e in errors), errors
    assert Build.objects.count() == 1  # nothing stored

    page.fill("#id_config", "inductor.max_autotune=true")
    page.fill("#id_env", "TORCHINDUCTOR_FREEZING=1")
    page.click("input[name=apply]")
    page.wait_for_selector(".messagelist")
    overrides = Overrides.build({"inductor.max_autotune": True}, {"TORCHINDUCTOR_FREEZING": "1"})
    variant = Build.objects.get(local_label=variant_label(base.local_label, overrides))
    assert variant.overrides == overrides.as_document() and variant.git_sha == base.git_sha
    assert f"+{variant.local_label}" in page.locator(".messagelist").inner_text()
    page.screenshot(path=str(tmp_path / "variant-made.png"), full_page=True)
    if SHOTS:
        import shutil

        for shot in tmp_path.glob("*.png"):
            shutil.copy(shot, SHOTS)
    # Django's admin pages link no favicon: Chromium's own /favicon.ico request is the one 404 (every
    # request of the pages themselves is checked by the HTTP entries).
    assert [p for p in problems if not p.startswith("console error: Failed to load resource")] == []
    assert len(problems) <= 3
