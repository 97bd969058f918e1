"""Issue #42's crawler (dashboard/web/crawl.py): what it flags on pages made for it. That the quick
start's database has none of it (no 5xx, no DEBUG page, no broken link, no colour without a reason, no
finding whose page or board differs from its API answer) is tested beside the other quick-start pages,
on the same database: tests/dashboard/test_browser_quickstart_pages.py."""
from __future__ import annotations

from dashboard.web.crawl import crawl, format_report

PAGES = {
    "/": ('<a href="/a/">a</a> <a href="/b/">b</a> <a href="https://example.org/">out</a> <a href="/static/x.css">css</a>'
          '<a href="/gone/">gone</a>'),
    "/a/": ('<table><tr><td class="num worse" title="past noise: one build so far">+9 %</td>'
            '<td class="num better"><a href="/regressions/7/">-12 %</a></td>'
            '<td class="cell worse">+40 %</td></tr></table>'),
    "/regressions/7/": "<h1>finding 7</h1>",
    "/b/": "<p>You’re seeing this error because you have <code>DEBUG = True</code> in your settings</p>",
}


def _get(url):
    if url in PAGES:
        return 200, "text/html; charset=utf-8", PAGES[url]
    return 404, "text/html", "<h1>Not found</h1>"


def test_the_crawler_names_each_kind_of_problem_on_pages_made_for_it():
    report = crawl(_get, mistakes=("/mistyped/",))
    kinds = sorted((p.kind, p.url) for p in report.problems)
    assert kinds == [("broken_link", "/gone/"), ("colour_without_reason", "/a/"), ("debug_page", "/b/")], format_report(report)
    assert report.coloured_cells == 3  # the one with a tooltip and the one linking a finding carry their reason
    assert "/static/x.css" not in report.pages and "https://example.org/" not in report.pages
    assert "/mistyped/" in report.pages
