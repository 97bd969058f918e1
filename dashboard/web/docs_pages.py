"""The repository's docs/ pages (and the README), served at /docs/<page>/ so that every page's footer
links to documentation that works wherever the dashboard runs (docs/index.md). The markdown is shown
as it is written, preformatted; its links to other pages of docs/ become links to their /docs/ URL."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PAGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
# [text](page.md), [text](docs/page.md) (the README's) or [text](../README.md), optionally with a
# #fragment; after HTML escaping.
LINK = re.compile(r"\[([^\]\n]+)\]\((?:docs/)?(\.\./README|[a-z0-9][a-z0-9-]*)\.md(#[A-Za-z0-9_-]+)?\)")
FOOTER_PAGES = (("index", "docs"), ("quickstart", "quick start"), ("pages", "pages"), ("measuring", "measuring"),
                ("detection", "detection"), ("variants", "variants"), ("api-and-ci", "API and CI"), ("alerts", "alerts"),
                ("deploying", "deploying"), ("benchmarks", "benchmarks"))


@dataclass(frozen=True)
class DocPage:
    name: str
    title: str
    body: SafeString


def doc_path(*, name: str) -> Path | None:
    """The file of page ``name`` (``readme``: the README), or None when there is none."""
    if not PAGE_NAME.fullmatch(name):
        return None
    path = settings.BASE_DIR / "README.md" if name == "readme" else settings.BASE_DIR / "docs" / f"{name}.md"
    return path if path.is_file() else None


def doc_page(*, name: str) -> DocPage | None:
    path = doc_path(name=name)
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")), name)
    return DocPage(name=name, title=title, body=mark_safe(LINK.sub(_link, escape(text))))  # noqa: S308 (escaped first)


def _link(match: re.Match) -> str:
    text, target, fragment = match.groups()
    name = "readme" if target == "../README" else target
    if doc_path(name=name) is None:  # a page not written (yet): its name, never a link that answers 404
        return match.group(0)
    return f'<a href="{reverse("web:doc", args=[name])}{fragment or ""}">{text}</a>'


def footer_links() -> list[tuple[str, str]]:
    """(URL, label) of the docs pages the footer names: those present in docs/."""
    return [(reverse("web:doc", args=[name]), label) for name, label in FOOTER_PAGES if doc_path(name=name)]
