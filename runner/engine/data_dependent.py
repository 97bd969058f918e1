"""A data-dependent error: compiling or exporting needed the value of an unbacked symbol (``u0``)
to decide a guard, and the symbol has none at compile time (docs/compile-paths.md).

Such a failure is its own status (``data_dependent_error``), with the expression the compiler
could not decide and the user's source line that asked for it, read from torch's message:
``Could not guard on data-dependent expression Eq(u0, 1) (unhinted: ...)`` and ``The following
call raised this error: File "model.py", line 7, in forward``, or, where torch says less (2.11's
export), the file and line its ``Caused by:`` line ends with.

Imports no torch at import time (``failures`` is used on the parent side too).
"""
from __future__ import annotations

import re
from typing import Iterable

from contract.data_dependent import caused_at

STATUS = "data_dependent_error"
# The exception types torch raises for it (torch.fx.experimental.symbolic_shapes and fake tensors).
_TYPES = frozenset({"GuardOnDataDependentSymNode", "DataDependentOutputException", "PendingUnbackedSymbolNotFound"})
_EXPRESSION = re.compile(r"data-dependent expression (?P<expr>.+?)(?: \(unhinted|\.\s|\n|$)")
_CALLER = re.compile(r'The following call raised this error:\s*\n\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)'
                     r'(?:\n(?P<code>[ \t]+\S[^\n]*))?')
_CAUSED_BY = re.compile(r"Caused by: (?P<where>[^\n]+)")


def is_data_dependent(chain: Iterable[BaseException]) -> bool:
    """Whether any exception of ``chain`` (an exception, what it wraps, its causes) is one."""
    for link in chain:
        if type(link).__name__ in _TYPES or "could not guard on data-dependent" in str(link).lower():
            return True
    return False


def describe(text: str) -> dict:
    """{"expression", "source", "code", "caused_by"} found in a data-dependent error's message;
    a key is absent where the message does not say."""
    found: dict = {}
    if match := _EXPRESSION.search(text):
        found["expression"] = match["expr"].strip()
    if match := _CALLER.search(text):
        from runner.engine.dynamo_stats import short_path  # noqa: PLC0415 (the case side only: it imports torch)

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
