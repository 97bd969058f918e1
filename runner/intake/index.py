"""Which torch a worker's intake takes: the versions its package index holds (a directory of wheels,
or a PEP 503 simple index's page of torch), those this interpreter can install, and the one
``take`` names (the newest pre-release, the newest, the newest release, or a pinned version)."""
from __future__ import annotations

import html
import os
import re
import subprocess
import urllib.request

from packaging.tags import compatible_tags, cpython_tags, platform_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from runner.intake.config import IntakeConfig

_HREF = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.IGNORECASE)
INDEX_TIMEOUT_S = 60


class ResolveError(LookupError):
    """No version to take: the index unreadable, or nothing in it fits; the message says which."""


def python_version(python: str) -> tuple[int, int]:
    done = subprocess.run([python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ResolveError(f"{python} does not run: {done.stderr.strip()[-300:]}")
    major, minor = done.stdout.split()
    return int(major), int(minor)


def _supported(version: tuple[int, int]) -> set:
    platforms = list(platform_tags())
    return set(cpython_tags(python_version=version, platforms=platforms)) | set(compatible_tags(python_version=version, platforms=platforms))


def wheel_names(config: IntakeConfig) -> list[str]:
    """The file names of the index's torch wheels."""
    if not config.index_is_url:
        return sorted(name for name in os.listdir(config.index) if name.lower().startswith("torch-") and name.endswith(".whl"))
    url = config.index.rstrip("/") + "/torch/"
    try:
        with urllib.request.urlopen(url, timeout=INDEX_TIMEOUT_S) as answer:  # noqa: S310 (the operator's index)
            page = answer.read(64 * 1024 * 1024).decode("utf-8", "replace")
    except OSError as exc:
        raise ResolveError(f"the index {url} cannot be read: {exc}") from None
    names = (html.unescape(href).split("#", 1)[0].rsplit("/", 1)[-1] for href in _HREF.findall(page))
    return sorted({urllib.request.url2pathname(n) for n in names if n.endswith(".whl")})


def available_versions(config: IntakeConfig) -> list[Version]:
    """The torch versions of the index this worker's interpreter can install (of the variant asked)."""
    supported = _supported(python_version(config.python))
    found = set()
    for name in wheel_names(config):
        try:
            package, version, _, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if package != "torch" or not (tags & supported):
            continue
        if config.variant and (version.local or "") != config.variant:
            continue
        found.add(version)
    return sorted(found)


def resolve(config: IntakeConfig) -> Version:
    """The version ``config.take`` names. Raises ``ResolveError``."""
    versions = available_versions(config)
    what = f"torch{' +' + config.variant if config.variant else ''}"
    if config.take == "pre":
        chosen = [v for v in versions if v.is_prerelease]
    elif config.take == "release":
        chosen = [v for v in versions if not v.is_prerelease]
    elif config.take == "newest":
        chosen = versions
    else:
        pinned = Version(config.take)
        chosen = [v for v in versions if v == pinned or (not pinned.local and v.public == pinned.public)]
    if not chosen:
        have = ", ".join(str(v) for v in versions[-5:]) or "none for this interpreter"
        raise ResolveError(f"no {what} to take ({config.take}) in {config.describe()['index']} (have: {have})")
    return chosen[-1]


def version_named(config: IntakeConfig, text: str) -> Version:
    """``text`` as a version this worker's index holds (a message names one: nothing else is taken)."""
    try:
        version = Version(str(text))
    except InvalidVersion:
        raise ResolveError(f"version {str(text)[:80]!r}: not a version") from None
    if version not in available_versions(config):
        raise ResolveError(f"torch {version} is not in this worker's index {config.describe()['index']}")
    return version

