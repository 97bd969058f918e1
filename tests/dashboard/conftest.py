"""The real headless Chromium for the browser tests (Debian's /usr/bin/chromium, never a downloaded one)."""
from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; Django's ORM calls in the test are
    # still synchronous, so tell Django not to refuse them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )
        try:
            yield browser
        finally:
            browser.close()
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


def open_page(browser, url: str, *, javascript: bool = True, viewport: dict | None = None):
    """A new page at ``url`` and the list of problems it reported (console errors and warnings, page
    errors, failed requests, HTTP errors), which a test expects to be empty. ``viewport``: the
    window's size (Playwright's default: 1280 x 720)."""
    context = browser.new_context(java_script_enabled=javascript, **({"viewport": viewport} if viewport else {}))
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    # A request the page's own navigation cancelled (net::ERR_ABORTED: e.g. the favicon while a
    # picker reloads the page) is not a failure; any other failed request is.
    page.on("requestfailed", lambda req: None if "ERR_ABORTED" in (req.failure or "")
            else problems.append(f"request failed: {req.url} ({req.failure})"))
    page.on("response", lambda resp: problems.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
    page.goto(url, wait_until="networkidle")
    return page, problems


def signed_in_admin(browser, live_server, django_user_model, path: str, *, viewport: dict | None = None):
    """A new superuser signed in through the admin's login page, now at ``path`` (an admin page): (page, problems)."""
    django_user_model.objects.create_superuser("admin", "admin@example.com", "pw-for-the-test")
    page, problems = open_page(browser, f"{live_server.url}/admin/login/?next={path}", viewport=viewport)
    page.fill("#id_username", "admin")
    page.fill("#id_password", "pw-for-the-test")
    page.click("input[type=submit]")
    page.wait_for_url(f"**{path}")
    return page, problems
