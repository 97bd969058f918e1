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

from typing import Iterable

from contract.data_dependent import STATUS, TYPES, headline, says_data_dependent
from contract.data_dependent import describe as describe_text

__all__ = ["STATUS", "describe", "headline", "is_data_dependent"]


def is_data_dependent(chain: Iterable[BaseException]) -> bool:
    """Whether any exception of ``chain`` (an exception, what it wraps, its causes) is one."""
    return any(type(link).__name__ in TYPES or says_data_dependent(str(link)) for link in chain)


def describe(text: str) -> dict:
    """``contract.data_dependent.describe`` with the source's file shortened as graph breaks' are."""
    from runner.engine.dynamo_stats import short_path  # noqa: PLC0415 (the case side only: it imports torch)

    return describe_text(text, short_path)
