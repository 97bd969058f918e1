"""What any value must be before it reaches the database (docs/api-limits.md), in one place: the
run document's validation (``contract.document``) and the API's serializers call these.

- strings (and object keys) hold no NUL (U+0000: PostgreSQL's text refuses it) and no unpaired
  surrogate (U+D800..U+DFFF: not encodable as UTF-8);
- numbers are finite (JSON has no NaN or infinity) and integers within float range;
- objects and arrays nest at most ``MAX_DEPTH`` deep (the admin renders a JSON field recursively);
- a metric lies within its bound (``contract.metrics``, ``METRIC_BOUNDS``), far beyond any real measurement, so that
  the summaries' means and totals and the pages' changes stay finite.

Pure Python, no Django: GPU workers check what they produce with the same rules. Each check
answers ``(field, message)`` pairs; the field is a path such as ``results[3].environment.x``.
"""
from __future__ import annotations

import json
import math
import re
import sys

from contract.metrics import BOUNDS

MAX_DEPTH = 32  # objects and arrays inside one another, counted from the value checked

# The largest value each metric may have (``contract.metrics``); none is near what a real measurement gives.
METRIC_BOUNDS: dict[str, float] = BOUNDS
_MS = 1e9  # 11.6 days for one call
SAMPLE_BOUND_MS = _MS  # each timing sample (samples.eager_ms, compiled_ms, host_probe_ms)

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_NUMBER = re.compile(r"\d{300}")  # an integer past float range has 309 digits or more
_FLOAT_MAX = sys.float_info.max

Problem = tuple[str, str]


def field_path(parts) -> str:
    """``['results', 3, 'status']`` -> ``results[3].status``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def printable(text: str) -> str:
    """``text`` with any unpaired surrogate written as an escape (``\\ud800``): a message or field name that
    quotes bad input can always be encoded (an error about a surrogate must not fail itself)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if _SURROGATE.search(text) else text


ECHO_CHARS = 200  # the most of a bad input that an error message quotes (docs/api-limits.md)


def clipped(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as an error quotes it: at most ``limit`` characters, saying how many were left out
    (a 400 echoed a 2.5 MB document's whole workloads array, 4.9 MB of it, issue #46)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters left out)"


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored, or None."""
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    if _SURROGATE.search(text):
        return "contains an unpaired surrogate (not valid UTF-8)"
    return None


def _fine_at_a_glance(value) -> bool:
    """Whether nothing in ``value`` can be bad, from one serialization in C: no NUL (escaped as
    \\u0000), no surrogate (cannot be encoded), no NaN or infinity (refused), not too deep. False
    also when in doubt (a string holding a backslash then u0000; something json cannot serialize)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode()
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return False
    if "\\u0000" in text or _LONG_NUMBER.search(text):
        return False
    return text.count("{") + text.count("[") <= MAX_DEPTH or _depth(value) <= MAX_DEPTH


def _depth(value) -> int:
    """How deep objects and arrays nest in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items = item.values()
        elif isinstance(item, (list, tuple)):
            items = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in items)
    return deepest


def value_problems(value, path: list | tuple = ()) -> list[Problem]:
    """Every string, key, number or container in a parsed JSON ``value`` that cannot be stored,
    named by its path (``path``: where ``value`` is, e.g. ``["environment"]``). One problem per
    string, key or number; one for a container nested past ``MAX_DEPTH``, whose inside is not read."""
    if _fine_at_a_glance(value):
        return []
    out: list[Problem] = []
    stack = [(value, list(path), 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            if problem := text_problem(item):
                out.append((field_path(where), problem))
        elif isinstance(item, float) and not math.isfinite(item):
            out.append((field_path(where), f"{item} is not a finite number"))
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > _FLOAT_MAX:
            out.append((field_path(where), f"a {len(str(abs(item)))}-digit integer is past the range of a number ({_FLOAT_MAX:.3g})"))
        elif isinstance(item, (dict, list, tuple)):
            if depth + 1 > MAX_DEPTH:
                out.append((field_path(where), f"nests objects and arrays past {MAX_DEPTH} levels"))
                continue
            if isinstance(item, dict):
                children = []
                for key, child in item.items():
                    if isinstance(key, str) and (problem := text_problem(key)):
                        out.append((field_path(where), f"a key {problem}"))
                    else:
                        children.append((child, where + [key], depth + 1))
            else:
                children = [(child, where + [index], depth + 1) for index, child in enumerate(item)]
            stack.extend(reversed(children))
    return out


def metric_problem(name: str, value) -> str | None:
    """Why a metric's value is past its bound (``METRIC_BOUNDS``), or None."""
    bound = METRIC_BOUNDS.get(name)
    if bound is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if value <= bound:
        return None
    shown = f"{float(value):.4g}" if value <= _FLOAT_MAX else f"a {len(str(value))}-digit integer"
    return f"{shown} is past this metric's bound ({bound:.4g}; see docs/api-limits.md)"


def sample_problems(samples: object, path: list) -> list[Problem]:
    """Timing samples past ``SAMPLE_BOUND_MS`` (the first of each list)."""
    out = []
    for key, values in (samples.items() if isinstance(samples, dict) else ()):
        if key.endswith("_ms") and isinstance(values, list):
            for index, v in enumerate(values):
                if isinstance(v, (int, float)) and not isinstance(v, bool) and v > SAMPLE_BOUND_MS:
                    out.append((field_path([*path, key, index]), f"{v:.4g} ms is past the bound of a sample ({SAMPLE_BOUND_MS:.4g} ms)"))
                    break
    return out
