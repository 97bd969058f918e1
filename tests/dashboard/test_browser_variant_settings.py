"""Issue #33 item 1 in the admin, in a real headless Chromium: the variant form says that only
settings that are data are taken, and refuses a program (``TRITON_PTXAS_PATH``) and a compiler
(``inductor.cpp.cxx``) naming each, storing nothing; a data setting still makes the variant."""
from __future__ import annotations

import os

import pytest

from dashboard.results.models import Build
from dashboard.results.services import run_ingest
from tests.dashboard.test_browser_variant_admin import open_variant_form
from tests.documents import make_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("PTBENCH_SCREENSHOTS", "")  # a folder: the test leaves its screenshots there


def test_admin_variant_form_refuses_settings_that_are_not_data(browser, live_server, django_user_model, tmp_path):
    run_ingest(document=make_document())
    base = Build.objects.get()
    page, problems = open_variant_form(browser, live_server, django_user_model, base)
    form = page.locator("#variant-form").inner_text()
    assert "Only settings that are data: a path, program, compiler, library or remote cache is refused" in form

    page.fill("#id_env", "TORCHINDUCTOR_FREEZING=1\nTRITON_PTXAS_PATH=/tmp/evil.sh")
    page.click("input[name=apply]")
    page.wait_for_selector("#variant-form .errorlist")
    errors = page.locator("#variant-form .errorlist").all_inner_texts()
    assert any("env.TRITON_PTXAS_PATH: refused: 'ptxas' in its name says it names a path, a program, a compiler "
               "or a library" in e for e in errors), errors
    page.screenshot(path=str(tmp_path / "variant-settings-refused.png"), full_page=True)

    page.fill("#id_env", "")
    page.fill("#id_config", "inductor.cpp.cxx=/tmp/evil.sh")
    page.click("input[name=apply]")
    page.wait_for_selector("#variant-form .errorlist")
    errors = page.locator("#variant-form .errorlist").all_inner_texts()
    assert any("config.inductor.cpp.cxx: refused: 'cxx' in its name" in e for e in errors), errors
    assert Build.objects.count() == 1  # nothing stored

    page.fill("#id_config", "")
    page.fill("#id_env", "TORCHINDUCTOR_FREEZING=1")  # data, and env needs no probed catalog
    page.click("input[name=apply]")
    page.wait_for_selector(".messagelist")
    variant = Build.objects.exclude(pk=base.pk).get()
    assert variant.overrides == {"config": {}, "env": {"TORCHINDUCTOR_FREEZING": "1"}}
    assert f"+{variant.local_label}" in page.locator(".messagelist").inner_text()
    if SHOTS:
        import shutil

        for shot in tmp_path.glob("*.png"):
            shutil.copy(shot, SHOTS)
    assert [p for p in problems if not p.startswith("console error: Failed to load resource")] == []
