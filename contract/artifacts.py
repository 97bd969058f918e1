"""What a run document says of a case's kept artifact (``results[i].artifact``), checked the same
way by the runner and the dashboard: a content address (sha256), a safe file name, and for a
document on disk a path relative to it that cannot leave its directory (docs/artifacts.md)."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

SHA256 = re.compile(r"[0-9a-f]{64}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
CONTENT_TYPE = "application/gzip"


def name_error(name: object) -> str | None:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return "1 to 200 letters, digits, '.', '_' or '-', starting with a letter or digit"
    return None


def sha256_error(value: object) -> str | None:
    if not isinstance(value, str) or not SHA256.fullmatch(value):
        return "64 lower-case hexadecimal digits (the file's sha256)"
    return None


def path_error(path: object) -> str | None:
    """Why ``path`` cannot name a file beside the run document, or None: it must be relative, use
    '/' only, and never step out ('..') of the document's directory."""
    if not isinstance(path, str) or not path or len(path) > 400:
        return "a relative path of 1 to 400 characters"
    if "\\" in path or "\x00" in path or ":" in path:
        return "'/' separated, without '\\', ':' or NUL"
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return "relative to the run document's directory, not absolute"
    if any(part in ("..", "") for part in path.split("/")) or not pure.parts:
        return "inside the run document's directory: no '..' or empty parts"
    return None

