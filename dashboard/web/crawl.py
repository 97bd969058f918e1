"""A crawler over the site's own pages (issue #42's check, docs/pages.md "Checking every page"): from
``/`` it follows every link to another page of the site, breadth first, within a bound per kind of
page, and names each problem a person would meet:

- ``server_error``: a page answered 5xx;
- ``debug_page``: a page is Django's DEBUG page (a traceback or "Page not found" with the URLconf);
- ``broken_link``: a page links to one that answers 404;
- ``colour_without_reason``: a cell coloured better or worse that neither links to a finding nor says,
  in a tooltip of its own or of the cell around it, why it is coloured (one judgement behind every
  colour: docs/noise-and-findings.md);
- ``finding_differs``: a finding whose page, or the board that links it, does not show the numbers its
  API answer gives (``text``, the one wording every surface takes from ``contract/findings.py``).

It reads pages through a ``get(url) -> (status, content_type, text)`` callable, so the same crawl runs
over Django's test client (tests) or a served dashboard (``manage.py crawl_pages``).
"""
from __future__ import annotations

import html
import json
import re
from collections import Counter, deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Callable
from urllib.parse import urldefrag, urlsplit

from contract.findings import FindingNumbers, format_change

# Pages of these prefixes are not crawled: files, the admin, the API's JSON, sign-in and sign-out.
SKIPPED_PREFIXES = ("/static/", "/admin/", "/api/", "/accounts/", "/login", "/logout", "/artifacts/")
SKIPPED_SUFFIXES = (".csv", ".json", ".gz", ".png", ".svg", ".js", ".css")
JUDGED_CLASSES = {"better", "worse"}  # the judgement's colours (site.css: .cell, td, span)
JUDGED_TAGS = {"td", "span", "div"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Django's technical 404 and 500 pages (an error excerpt on a page of ours may hold a traceback: not a mark).
DEBUG_MARKS = ("seeing this error because you have <code>DEBUG = True</code>", "<title>Page not found at",
               '<th scope="row">Django Version:</th>')

Get = Callable[[str], tuple[int, str, str]]


@dataclass(frozen=True)
class Problem:
    kind: str
    url: str
    detail: str


@dataclass
class CrawlReport:
    pages: list[str] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    coloured_cells: int = 0
    problems: list[Problem] = field(default_factory=list)

    def by_kind(self) -> Counter:
        return Counter(p.kind for p in self.problems)


@dataclass
class _Element:
    tag: str
    classes: frozenset
    title: str
    judged: bool
    reasoned: bool = False  # a link to a finding inside, or a title on it or around it


class _PageParser(HTMLParser):
    """Collects a page's links and its judged cells, each with whether it carries a reason."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.stack: list[_Element] = []
        self.judged: list[_Element] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        href = attrs.get("href")
        if tag == "a" and href:
            self.links.append(href)
            if href.startswith("/regressions/"):
                for open_element in self.stack:
                    open_element.reasoned = True
        if tag in VOID_TAGS:
            return
        classes = frozenset((attrs.get("class") or "").split())
        title = (attrs.get("title") or attrs.get("data-reason") or "").strip()
        element = _Element(tag, classes, title, judged=tag in JUDGED_TAGS and bool(classes & JUDGED_CLASSES))
        if element.judged:
            element.reasoned = bool(title) or any(e.title for e in self.stack if e.tag in JUDGED_TAGS)
            self.judged.append(element)
        self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS and self.stack and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, -1, -1):  # tolerate unclosed children (<p>, <li>)
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        if self.stack and self.stack[-1].judged and data.strip():
            self.text.append(data.strip())


def _internal(href: str, limit_prefixes: tuple[str, ...]) -> str | None:
    """The site path ``href`` points to, or None for another site, a file or a skipped page."""
    href, _ = urldefrag(href)
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return None
    if parts.path.startswith(limit_prefixes) or parts.path.endswith(SKIPPED_SUFFIXES):
        return None
    if "format=" in parts.query or "export" in parts.path:
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def page_kind(path: str) -> str:
    """The bound's key: a page's first path segment (``/workloads/a/`` and ``/workloads/b/`` are one kind)."""
    first = path.split("?")[0].strip("/").split("/")[0]
    return first or "/"


# Mistyped addresses a person may open: each must answer a page of the site (4xx), never 5xx or DEBUG.
MISTAKES = ("/workloads/no_such_workload/", "/regressions/999999999/", "/runs/999999999/", "/no-such-page/",
            "/compare/?base=zzzz&head=yyyy", "/explain/999999999/999999998/", "/dynamic/?machine=no-such-class",
            "/regressions/?status=no-such-status", "/docs/no-such-page/")


def crawl(get: Get, *, start: str = "/", per_kind: int = 25, limit: int = 400,
          mistakes: tuple[str, ...] = MISTAKES) -> CrawlReport:
    """Crawls from ``start`` (at most ``per_kind`` pages of each kind and ``limit`` in all), then opens
    each of ``mistakes``, which must answer a page of the site."""
    report = CrawlReport()
    finding_links: dict[int, set[str]] = {}  # finding id -> the pages that link it
    seen, taken = {start}, Counter()
    queue: deque[tuple[str, str]] = deque([(start, "")])
    while queue and len(report.pages) < limit:
        url, referrer = queue.popleft()
        status, content_type, text = _open(get, report, url, f"linked from {referrer or 'the start'}")
        if status == 404 and referrer:
            report.problems.append(Problem("broken_link", url, f"404, linked from {referrer}"))
        if "html" not in content_type or status >= 300:
            continue
        parser = _PageParser()
        parser.feed(text)
        report.coloured_cells += len(parser.judged)
        for element in parser.judged:
            if not element.reasoned:
                report.problems.append(Problem(
                    "colour_without_reason", url,
                    f"<{element.tag} class=\"{' '.join(sorted(element.classes))}\"> with no finding link and no tooltip"))
        for href in parser.links:
            if match := FINDING_PAGE.match(urldefrag(href)[0]):
                finding_links.setdefault(int(match[1]), set()).add(url)
            path = _internal(href, SKIPPED_PREFIXES)
            if path is None or path in seen:
                continue
            seen.add(path)
            kind = page_kind(path)
            if taken[kind] >= per_kind:
                continue
            taken[kind] += 1
            queue.append((path, url))
    _check_findings(get, report, finding_links)
    for url in mistakes:
        _open(get, report, url, "for a mistyped address")
    return report


def _open(get: Get, report: CrawlReport, url: str, how: str) -> tuple[int, str, str]:
    """``get(url)``, counted, with a 5xx or Django's DEBUG page noted as a problem (``how`` the page was reached)."""
    status, content_type, text = get(url)
    report.pages.append(url)
    report.statuses[status // 100 * 100] += 1
    if status >= 500:
        report.problems.append(Problem("server_error", url, f"{status}, {how}"))
    if any(mark in text for mark in DEBUG_MARKS):
        report.problems.append(Problem("debug_page", url, f"Django's DEBUG page ({status}), {how}"))
    return status, content_type, text


FINDING_PAGE = re.compile(r"^/regressions/(\d+)/$")


def _visible_text(page: str) -> str:
    """A page's text as a person reads it: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _check_findings(get: Get, report: CrawlReport, finding_links: dict[int, set[str]], *, most: int = 40) -> None:
    """Each linked finding's numbers as its API answer gives them (its values and its change, in the one
    wording of ``contract.findings``) must be on its own page and on the board linking it."""
    pages: dict[str, str] = {}
    for finding_id in sorted(finding_links)[:most]:
        status, _, body = get(f"/api/v1/regressions/{finding_id}/")
        if status != 200:
            continue
        data = json.loads(body)
        numbers = FindingNumbers.from_dict(data.get("metric") or "", data)
        pieces = [p for p in (numbers.values_text, format_change(numbers.change)) if p]
        own = f"/regressions/{finding_id}/"
        for url in sorted(u for u in finding_links[finding_id] | {own} if u == own or u.split("?")[0] == "/regressions/"):
            if url not in pages:
                pages[url] = _visible_text(get(url)[2])
            missing = [p for p in pieces if p not in pages[url]]
            if missing:
                report.problems.append(Problem("finding_differs", url, f"finding {finding_id}: the API's {missing} not shown"))


def format_report(report: CrawlReport, *, shown: int = 40) -> str:
    """A table of what was crawled and each problem (the first ``shown``)."""
    kinds = Counter(page_kind(p) for p in report.pages)
    lines = [f"pages crawled: {len(report.pages)} ({', '.join(f'{k} {n}' for k, n in kinds.most_common())})",
             f"answers: {', '.join(f'{s // 100}xx {n}' for s, n in sorted(report.statuses.items()))}",
             f"judged (coloured) cells: {report.coloured_cells}",
             f"problems: {len(report.problems)}" + (f" ({', '.join(f'{k} {n}' for k, n in report.by_kind().most_common())})"
                                                  if report.problems else "")]
    for problem in report.problems[:shown]:
        lines.append(f"  {problem.kind:<22} {problem.url}  {problem.detail}")
    if len(report.problems) > shown:
        lines.append(f"  ... and {len(report.problems) - shown} more")
    return "\n".join(lines)
