"""A case's kept artifact on its row (run page) and on the workload page: the download link, its
size, what the size bound dropped, and the command that opens it in tlparse (docs/artifacts.md).
The file itself is never shown: it is data, downloaded as an attachment."""
from __future__ import annotations

import html

from django import template
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.safestring import mark_safe

register = template.Library()


def tlparse_command(name: str) -> str:
    """tlparse reads a plain log file: the download is gzip. Decompressed through ``head -c`` so the
    command itself stops at ARTIFACT_MAX_EXPANDED_BYTES, whatever the file (an upload past it is
    refused as a gzip bomb; a file stored before that check, or by hand, is bounded here all the same)."""
    plain = name.removesuffix(".gz")
    if plain == name:
        return f"tlparse {name}"
    return f"gzip -dc {name} | head -c {settings.ARTIFACT_MAX_EXPANDED_BYTES} > {plain} && tlparse {plain}"


def _dropped(reference: dict) -> str:
    parts = [f"{item.get('kind')} ({item.get('records')})" for item in (reference.get("dropped") or [])[:6]
             if isinstance(item, dict)]
    if reference.get("truncated_records"):
        parts.append(f"the last {reference['truncated_records']} records")
    return f" · kept within {filesizeformat(reference.get('max_bytes'))}, dropped: {', '.join(parts)}" if parts else ""


def artifact_html(result) -> str:
    """The artifact block of ``result`` (a Result with ``artifact_stored`` set by
    ``dashboard.results.artifacts.results_with_artifacts``), or '' when the case kept none."""
    reference = result.artifact
    if not isinstance(reference, dict) or not reference.get("sha256"):
        return ""
    name = html.escape(str(reference.get("name", "")))
    size = html.escape(filesizeformat(reference.get("size_bytes") or 0))
    sha = html.escape(reference["sha256"])
    dropped = html.escape(_dropped(reference))
    if not getattr(result, "artifact_stored", False):
        return (f'<div class="artifact missing" data-sha256="{sha}">compile trace {name} ({size}): not on this dashboard '
                f'(never uploaded, or pruned){dropped}</div>')
    url = html.escape(reverse("web:artifact", args=[reference["sha256"]]))
    return (f'<div class="artifact" data-sha256="{sha}">compile trace <a href="{url}" download>{name}</a> '
            f'(<span class="artifact-size">{size}</span>){dropped} · open: '
            f'<code class="tlparse">{html.escape(tlparse_command(str(reference.get("name", ""))))}</code></div>')


@register.simple_tag
def artifact_block(result):
    return mark_safe(artifact_html(result)) if result is not None else ""
