"""What every message format shares: the message itself, absolute links, GitHub's commit range and
Slack's escaping (``compose`` writes a run's findings with them, ``compose_bisection`` a bisection's)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings

from dashboard.results.models import Build

_REAL_SHA = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass
class Message:
    subject: str
    text: str
    html: str
    slack: dict


def absolute(path: str, query: dict | None = None) -> str:
    return settings.PTBENCH_BASE_URL.rstrip("/") + path + (f"?{urlencode(query)}" if query else "")


def commits_url(good: Build | None, bad: Build | None) -> str | None:
    """``https://github.com/pytorch/pytorch/compare/<good>...<bad>`` when both are real git shas."""
    if good is None or bad is None or good.git_sha == bad.git_sha:
        return None
    if not (_REAL_SHA.match(good.git_sha) and _REAL_SHA.match(bad.git_sha)):
        return None
    return f"https://github.com/pytorch/pytorch/compare/{good.git_sha}...{bad.git_sha}"


def labelled(pairs, *, indent: str = "") -> list[str]:
    return [f"{indent}{label}: {value}" for label, value in pairs if value]


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_link(url: str, label: str) -> str:
    return f"<{url}|{slack_escape(label)}>"
