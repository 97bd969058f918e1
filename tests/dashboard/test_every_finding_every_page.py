"""Every page survives every finding kind (issue #46 item 2): with one open finding of each kind on
the newest build (a change point of every tracked metric, a regression and an improvement; a case
that started failing; a failure that changed; a new graph-break reason and more graph breaks; a new
recompile reason and more recompiles; an unbacked/backed gap), every page and API read answers
without a 5xx, and the home page names the status change as it is ("pass -> compile_error")."""
from __future__ import annotations

import datetime as dt
import re
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.regressions.models import Regression
from dashboard.results.models import Result, Run
from tests.dashboard.every_finding import DETERMINISTIC, change_points_every_metric, every_finding_history
from tests.dashboard.page_history import ref_for_day

pytestmark = pytest.mark.django_db
MAX_PAGES = 400


@pytest.fixture
def findings():
    every_finding_history()
    assert DETERMINISTIC <= set(Regression.objects.values_list("finding", flat=True)), \
        sorted(Regression.objects.values_list("finding", flat=True))
    change_points_every_metric()
    return list(Regression.objects.order_by("id"))


def _links(html: str) -> list[str]:
    return [unescape(href) for href in re.findall(r'href="([^"#]+)', html)]


def _crawl(client: Client, seeds: list[str]) -> tuple[list[str], list[str]]:
    """GET every page reachable from ``seeds`` on this site (not the admin, static files, downloads):
    (pages fetched, 'status url' of each 5xx)."""
    queue, seen, broken = list(seeds), set(), []
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        parts = urlsplit(url)
        if parts.netloc or parts.path.startswith(("/admin/", "/static/", "/artifacts/", "/accounts/")) or url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        if response.status_code >= 500:
            broken.append(f"{response.status_code} {url}")
        if response.status_code == 200 and "text/html" in response.get("Content-Type", "") and "format=" not in url:
            queue.extend(urljoin(url, href) for href in _links(response.content.decode()))
    return sorted(seen), broken


def test_every_page_answers_with_one_finding_of_each_kind_on_the_newest_build(findings):
    client = Client()
    results = list(Result.objects.order_by("id").values_list("id", flat=True))
    runs = [str(r) for r in Run.objects.values_list("id", flat=True)]
    seeds = ["/", "/?machine=cpu", "/compare/", f"/compare/?head={ref_for_day(2)}&base={ref_for_day(1)}",
             "/regressions/", "/regressions/?status=all&kind=all", "/dynamic/", "/ab/", "/docs/",
             *(f"/regressions/{f.id}/" for f in findings), *(f"/runs/{r}/" for r in runs),
             "/workloads/mlp_loop/", "/workloads/resnet_train/"]
    pages, broken = _crawl(client, seeds)
    assert broken == [], broken
    assert sum(p.startswith("/explain/") for p in pages) >= 1 and len(pages) > 40, pages

    api = [f"/api/v1/verdict/?build={ref_for_day(2)}", f"/api/v1/verdict/?build={ref_for_day(2)}&baseline={ref_for_day(1)}",
           "/api/v1/regressions/", "/api/v1/regressions/?status=all", "/api/v1/builds/", f"/api/v1/builds/{ref_for_day(2)}/",
           "/api/v1/runs/", "/api/v1/results/", "/api/v1/series/", f"/api/v1/compare/?head={ref_for_day(2)}&base={ref_for_day(1)}",
           *(f"/api/v1/regressions/{f.id}/" for f in findings), *(f"/api/v1/runs/{r}/" for r in runs),
           *(f"/api/v1/results/{r}/" for r in results), f"/api/v1/explain/{results[0]}/{results[-1]}/"]
    api += [f"/api/v1/series/{s['signature']}/" for s in client.get("/api/v1/series/").json()["results"]]
    answers = {url: client.get(url).status_code for url in api}
    assert [f"{code} {url}" for url, code in answers.items() if code >= 500] == []
    assert answers[f"/api/v1/verdict/?build={ref_for_day(2)}"] == 200


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_home_page_names_a_status_change_and_counts_what_did_not_pass(findings, settings):
    settings.PAGE_CACHE_SECONDS = 0
    text = _text(Client().get("/").content.decode())
    assert "pass -> compile_error" in text and "compile_error -> crash" in text
    # The newest build's verdict and its block count the cases that did not pass, by status.
    assert text.count("7 cases, 5 passed, 2 did not: 1 compile_error, 1 crash") == 2, text[:3000]
    # Measured on 2026-11-22 (the documents' started_at): not "last night".
    assert "Last night" not in text and "Newest builds" in text and "newest build, measured 2026-11-22" in text
    Run.objects.update(started_at=timezone.now() - dt.timedelta(hours=3))
    text = _text(Client().get("/").content.decode())
    assert "Last night" in text and "newest build, measured" not in text
