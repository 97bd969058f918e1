"""The pieces of bench/hostile_probe.py that need no deployment (tests/bench/test_hostile_probe.py
runs them): what one item's replay concluded, the tally of requests and 5xx answers, hostile query
strings, the site's own links in a page, and the printed table."""
from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import urlsplit

# Query parameters the pages and the API read (and a few they do not), each given junk.
PARAM_NAMES = ("build", "head", "base", "baseline", "machine", "machine_class", "page", "page_size", "since", "until", "status",
               "kind", "metric", "workload", "regime", "mode", "dtype", "size", "suite", "finding", "change", "q", "sort",
               "format", "fail_on_regression", "fail_on_suspect", "days", "signature", "series", "run", "a", "b", "unknown")
JUNK_VALUES = ("", " ", "'", '"', "-1", "0", "1e308", "-1e308", "NaN", "inf", "9" * 40, "1.5", "true", "null", "[]", "{}",
               "\x00", "a\x00b", "../../etc/passwd", "%ff", "\ud800"[:0] + "\u202e", "<script>alert(1)</script>",
               "label:", "label:" + "x" * 300, "+", "0000", "ffffffffffff", "x" * 5000, "2026-13-45", "0001-01-01T00:00:00+14:00",
               "9999-12-31T23:59:59-14:00", "😀", "a,b,,c", "DROP TABLE results;--")
# Names no page reads, as a client mistyping or probing might send them.
JUNK_NAMES = ("a%d", "%s", "x\x00", "page[]", "__proto__", "q" * 300)
# Addresses whose path carries a value (the junk is quoted into ``{}``).
PATH_TEMPLATES = ("/workloads/{}/", "/runs/{}/", "/regressions/{}/", "/explain/{}/1/", "/api/v1/builds/{}/", "/api/v1/runs/{}/",
                  "/api/v1/results/{}/", "/api/v1/series/{}/", "/api/v1/regressions/{}/", "/api/v1/regressions/{}/bisect/",
                  "/artifacts/{}/", "/docs/{}/")
PATH_VALUES = ("0", "-1", "9" * 30, "1e308", "NaN", "a%00b", "%25ff", "..%2F..%2Fetc%2Fpasswd", "label:x", "label:", "+cu130",
               "ffffffffffff+x", "%E2%80%AE", "x" * 2000, "00000000-0000-0000-0000-000000000000", "%F0%9F%98%80")
SKIPPED_PREFIXES = ("/admin/", "/static/", "/artifacts/", "/accounts/")


@dataclass
class Outcome:
    """One item's replay: ``held`` True (the fix held), False (broke) or None (not replayed here)."""

    item: str
    what: str
    held: bool | None
    detail: str = ""

    @property
    def word(self) -> str:
        return {True: "held", False: "BROKE", None: "not run"}[self.held]


@dataclass
class Tally:
    """Requests made and the 5xx answers among them (``"STATUS METHOD PATH"``), from any thread."""

    requests: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, method: str, path: str, status: int) -> None:
        with self.lock:
            self.requests += 1
            if status >= 500:
                self.errors.append(f"{status} {method} {path[:200]}")


def junk_query(rng: random.Random, *, most: int = 4) -> dict[str, str]:
    """One to ``most`` parameters (one in ten a name no page reads), each a junk value."""
    return {rng.choice(JUNK_NAMES if rng.random() < 0.1 else PARAM_NAMES): rng.choice(JUNK_VALUES) for _ in range(rng.randint(1, most))}


def junk_paths() -> list[str]:
    """Every address template with every junk path value (already quoted for a URL)."""
    return [template.format(value) for template in PATH_TEMPLATES for value in PATH_VALUES]


def site_links(html: str) -> list[str]:
    """The paths of this site a page links to (no other host, no admin, static file or download),
    in order, each once."""
    found: list[str] = []
    for href in re.findall(r'href="([^"#]+)', html):
        url = unescape(href)
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path.startswith("/") or parts.path.startswith(SKIPPED_PREFIXES):
            continue
        if url not in found:
            found.append(url)
    return found


def table(outcomes: list[Outcome], tally: Tally, *, verdicts_changed: int, verdicts_watched: int, large: dict,
          header: list[str]) -> str:
    """The report: the counts, the large document's detection, then each item's outcome."""
    lines = [*header, f"{'requests':<44}{tally.requests}", f"{'5xx answers':<44}{len(tally.errors)}",
             f"{'verdicts changed by another token':<44}{verdicts_changed} of {verdicts_watched} watched"]
    if large.get("detect_s") is not None:
        lines.append(f"{'large document: detection (results, s)':<44}{large['results']} results, {large['detect_s']:.1f} s "
                     f"from its submit, longest task {large.get('longest_task_s') or 0:.1f} s, "
                     f"{large.get('passes', 0)} pass(es) started; another document stored in {large.get('bystander_s') or 0:.1f} s meanwhile")
    else:
        lines.append(f"{'large document: detection':<44}not finished: {large.get('why', 'not run')}")
    lines.append("")
    lines.append(f"{'item':<6}{'outcome':<9}what (detail)")
    for outcome in outcomes:
        lines.append(f"{outcome.item:<6}{outcome.word:<9}{outcome.what}" + (f" ({outcome.detail})" if outcome.detail else ""))
    for error in tally.errors[:20]:
        lines.append(f"5xx: {error}")
    return "\n".join(lines)
