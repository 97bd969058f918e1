"""Errors are pages of the site, DEBUG on (the quick start's) or off: a mistyped workload URL names the
workload probably meant and never shows Django's DEBUG page; /api/ answers JSON (issue #42 item 6)."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.dashboard.page_history import ingest_build
from tests.documents import make_result

pytestmark = pytest.mark.django_db

DEBUG_PAGE = "You’re seeing this error because you have"


@pytest.mark.parametrize("debug", [True, False])
def test_404s_are_site_pages_naming_what_was_meant(settings, debug):
    settings.DEBUG = debug
    ingest_build(1, [make_result("resnet_train", "static")])
    client = Client(raise_request_exception=False)
    for path, said in (("/workloads/resnet_trian/", "unknown workload &#x27;resnet_trian&#x27;; did you mean &#x27;resnet_train&#x27;?"),
                       ("/regressions/99999/", "no regression 99999"), ("/no-such-page/", "no page at /no-such-page/"),
                       ("/docs/no-such-page/", "no documentation page")):
        page = client.get(path)
        html = page.content.decode()
        assert page.status_code == 404 and DEBUG_PAGE not in html, path
        assert 'id="error-page" data-status="404"' in html and said in html and 'id="docs-footer"' in html, path
    assert client.get("/compare").status_code == 301  # a missing slash is still added
    api = client.get("/api/v1/no-such-endpoint/")
    assert api.status_code == 404 and api["Content-Type"] == "application/json"


def test_the_500_page_needs_neither_the_database_nor_a_request():
    from dashboard.web.views.errors import server_error

    page = server_error(None)
    assert page.status_code == 500 and "Server error" in page.content.decode()
