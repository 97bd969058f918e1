"""Where a data-dependent error happened, read the same way by the runner (which stores
``environment.data_dependent``) and the dashboard (which shows it): torch 2.11's export names the
user's line only at the end of its ``Caused by:`` line (docs/compile-paths.md),

    is_causal = q_length > 1 and ...  # transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward (...)

The runner classifies a failure from its exceptions (``runner.engine.data_dependent``); a document
measured before that status existed (a ``compile_error`` whose message is one) is given today's
status at import (``reclassify``), so a failure reads the same whichever host measured it.

Pure Python.
"""
from __future__ import annotations

import re
from collections.abc import Callable

_CAUSED_BY_LINE = re.compile(r"^(?P<code>.*?)\s+# (?P<file>[^\s:]+):(?P<line>\d+) in (?P<func>[\w.<>]+)")


def caused_at(caused_by: str) -> tuple[str, str] | None:
    """(``file:line in func``, the code) that a ``Caused by:`` line ends with, or None."""
    match = _CAUSED_BY_LINE.search(caused_by or "")
    return (f"{match['file']}:{match['line']} in {match['func']}", match["code"].strip()) if match else None


STATUS = "data_dependent_error"
# The exception types torch raises for it (torch.fx.experimental.symbolic_shapes and fake tensors).
TYPES = frozenset({"GuardOnDataDependentSymNode", "DataDependentOutputException", "PendingUnbackedSymbolNotFound"})
_EXPRESSION = re.compile(r"data-dependent expression (?P<expr>.+?)(?: \(unhinted|\.\s|\n|$)")
_CALLER = re.compile(r'The following call raised this error:\s*\n\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)'
                     r'(?:\n(?P<code>[ \t]+\S[^\n]*))?')
_CAUSED_BY = re.compile(r"Caused by: (?P<where>[^\n]+)")
_TYPE_NAMED = re.compile(r"\b(" + "|".join(sorted(TYPES)) + r")\b")


def says_data_dependent(text: str) -> bool:
    """Whether an exception's type or message (one link of its chain, or them all) says it is one."""
    return bool(_TYPE_NAMED.search(text or "")) or "could not guard on data-dependent" in (text or "").lower()


def describe(text: str, short_path: Callable[[str], str] = lambda path: path) -> dict:
    """{"expression", "source", "code", "caused_by"} found in a data-dependent error's message;
    a key is absent where the message does not say. ``short_path`` shortens the source's file."""
    found: dict = {}
    if match := _EXPRESSION.search(text):
        found["expression"] = match["expr"].strip()
    if match := _CALLER.search(text):
        found["source"] = f"{short_path(match['file'])}:{match['line']} in {match['func'].strip()}"
        if match["code"]:
            found["code"] = match["code"].strip()
    if match := _CAUSED_BY.search(text):
        found["caused_by"] = match["where"].strip()
        if "source" not in found and (at := caused_at(found["caused_by"])):
            found["source"] = at[0]
            found.setdefault("code", at[1])
    return found


def headline(detail: dict) -> str:
    """One line for the error's message: ``data-dependent guard Eq(u0, 1) at model.py:7 in forward``."""
    text = "data-dependent guard"
    if "expression" in detail:
        text += f" {detail['expression']}"
    if "source" in detail:
        text += f" at {detail['source']}"
    return text


def reclassify(result: dict) -> bool:
    """A run document's result (in place): a ``compile_error`` that is a data-dependent error gets
    the status, message prefix and ``environment.data_dependent`` the runner gives one today.
    True when it changed."""
    error = result.get("error") if isinstance(result.get("error"), dict) else {}
    text = f"{error.get('type', '')}: {error.get('message', '')}"
    if result.get("status") != "compile_error" or not says_data_dependent(text):
        return False
    detail = describe(text)
    result["status"] = STATUS
    prefix = f"{headline(detail)}: "
    if not str(error.get("message", "")).startswith(prefix):
        error["message"] = prefix + str(error.get("message", ""))
    if isinstance(result.get("environment"), dict):
        result["environment"].setdefault("data_dependent", detail)
    return True
