"""The repository's docs/ pages (and the README), served at /docs/<page>/ so that every page's footer
links to documentation that works wherever the dashboard runs (docs/index.md).

The Markdown is rendered as HTML by markdown-it-py (CommonMark and its tables; raw HTML in a page is
escaped, never passed through): a link to another page of docs/ (``page.md``, ``docs/page.md``,
``../README.md``, with a ``#fragment``) becomes its /docs/ URL, an image of docs/img/ is served at
/docs/img/<name>, a heading gets the id GitHub gives it (so ``#fragment`` links land), and a link to
another file of the repository (``bench/results/...``) stays its text: the dashboard does not serve
the repository."""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

PAGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
IMAGE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\.png")
# page.md, docs/page.md (the README's) or ../README.md, optionally with a #fragment
DOC_LINK = re.compile(r"(?:\./)?(?:docs/)?(\.\./README|[a-z0-9][a-z0-9-]*)\.md(#[A-Za-z0-9_-]+)?")
DOC_IMAGE = re.compile(r"(?:\./)?(?:docs/)?img/([a-z0-9][a-z0-9_-]*\.png)")
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
    return _file(path)


def doc_image_path(*, name: str) -> Path | None:
    """A screenshot of docs/img/ (``overview.png``), or None."""
    return _file(settings.BASE_DIR / "docs" / "img" / name) if IMAGE_NAME.fullmatch(name) else None


def _file(path: Path) -> Path | None:
    """``path`` when it is a file; None when not, or when no file can have that name (a name past
    the file system's 255 bytes raised OSError: ``/docs/<2,000 x's>/`` was a 500, bench/hostile_probe.py)."""
    try:
        return path if path.is_file() else None
    except OSError:
        return None


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def doc_page(*, name: str) -> DocPage | None:
    path = doc_path(name=name)
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")), name)
    md = _markdown()
    tokens = md.parse(text)
    _link_pages(tokens)
    _heading_ids(tokens)
    return DocPage(name=name, title=title, body=mark_safe(md.renderer.render(tokens, md.options, {})))  # noqa: S308 (html off: markdown-it escapes)


def _link_pages(tokens: list[Token]) -> None:
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        kept: list[Token] = []
        links: list[bool] = []  # per open link: whether it is kept (else only its text is)
        for child in token.children:
            if child.type == "link_open":
                href = _served_href(str(child.attrs.get("href", "")))
                links.append(href is not None)
                if href is None:
                    continue
                child.attrs["href"] = href
            elif child.type == "link_close" and links and not links.pop():
                continue
            elif child.type == "image":
                found = DOC_IMAGE.fullmatch(str(child.attrs.get("src", "")))
                if found and doc_image_path(name=found.group(1)):
                    child.attrs["src"] = reverse("web:doc-image", args=[found.group(1)])
            kept.append(child)
        token.children = kept


def _served_href(href: str) -> str | None:
    """Where a link of a docs page points on the dashboard; None: shown as its text."""
    if href.startswith(("http://", "https://", "mailto:", "#", "/")):
        return href
    found = DOC_LINK.fullmatch(href)
    if found is None:
        return None  # another file of the repository: not served
    target, fragment = found.groups()
    name = "readme" if target == "../README" else target
    if doc_path(name=name) is None:  # a page not written (yet): its name, never a link that answers 404
        return None
    return reverse("web:doc", args=[name]) + (fragment or "")


def heading_slug(text: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _heading_ids(tokens: list[Token]) -> None:
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            slug = heading_slug(tokens[index + 1].content)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            token.attrs["id"] = slug if count == 0 else f"{slug}-{count}"


def footer_links() -> list[tuple[str, str]]:
    """(URL, label) of the docs pages the footer names: those present in docs/."""
    return [(reverse("web:doc", args=[name]), label) for name, label in FOOTER_PAGES if doc_path(name=name)]
