"""Which reference a result's ``compile_cpu_ratio`` was measured against (``runner.engine.compile_pairs``).

The ratio is the build's cold compile CPU time over that of the machine class's pinned reference
interpreter, compiled beside it: two ratios are comparable only when measured against the same
reference. A fleet whose reference changes (another torch, another git sha) moves every ratio at
once, so detection, both verdicts, the noise model and /compare/ start a new baseline of that metric
there instead of calling it a change of the build (``REFERENCED_METRICS``; every other metric is
unaffected).

A reference is named by its torch version and git sha (``environment.compile_pairs.reference``,
stored as ``Result.compile_reference`` at ingest): ``2.11.0+cu130@70d99e998b49``. Its python path is
left out (hosts of one class may install one reference at different paths; what it compiles with is
its torch), unless nothing else is known of it. A measuring method after the first
(``environment.compile_pairs.method``, ``runner.engine.compile_pairs.METHOD``) is part of the name
(``.../m2``): ratios measured another way start a new baseline too. A result without compile pairs has ``""``; results
without a reference are comparable with each other only. Pure: no Django.
"""
from __future__ import annotations

import hashlib

from contract.facts import COMPILE_PAIRS
from contract.metrics import REFERENCED

COMPILE_REFERENCE_MAX_LENGTH = 100  # Result.compile_reference
REFERENCED_METRICS = REFERENCED  # comparable only between results of one reference (contract.metrics ``referenced``)
NOT_COMPARABLE = "reference changed"  # what /compare/ and the verdicts say instead of a change


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def compile_reference_key(*, torch, git_sha, python=None, method=None) -> str:
    """The short name of a reference: ``torch@sha12``, else ``python:PATH``, else "", with ``/mN``
    for a method N after the first; never longer than ``COMPILE_REFERENCE_MAX_LENGTH`` (a longer one
    keeps its start and a hash of the whole)."""
    torch, git_sha, python, method = _text(torch), _text(git_sha), _text(python), _text(method)
    if torch or git_sha:
        key = f"{torch}@{git_sha[:12]}"
    elif python:
        key = f"python:{python}"
    else:
        return ""
    if method not in ("", "1"):
        key = f"{key}/m{method}"
    if len(key) > COMPILE_REFERENCE_MAX_LENGTH:
        digest = hashlib.sha1(key.encode("utf-8", "replace")).hexdigest()[:12]
        key = f"{key[:COMPILE_REFERENCE_MAX_LENGTH - 13]}#{digest}"
    return key


def compile_reference_of(environment) -> str:
    """The reference of a result's case environment (a run document's ``results[].environment``),
    "" where it has no compile pairs. Ingest and migration 0011's back-fill both use this."""
    pairs = environment.get(COMPILE_PAIRS) if isinstance(environment, dict) else None
    reference = pairs.get("reference") if isinstance(pairs, dict) else None
    if not isinstance(reference, dict):
        return ""
    return compile_reference_key(torch=reference.get("torch"), git_sha=reference.get("git_sha"),
                                 python=reference.get("python"), method=pairs.get("method"))


def reference_changed(metric: str, old_reference: str | None, new_reference: str | None) -> bool:
    """Whether two values of ``metric`` were measured against different compile references (always
    False for a metric that has none)."""
    return metric in REFERENCED_METRICS and (old_reference or "") != (new_reference or "")
