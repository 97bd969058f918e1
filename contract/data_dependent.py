"""Where a data-dependent error happened, read the same way by the runner (which stores
``environment.data_dependent``) and the dashboard (which shows it): torch 2.11's export names the
user's line only at the end of its ``Caused by:`` line (docs/compile-paths.md),

    is_causal = q_length > 1 and ...  # transformers/integrations/sdpa_attention.py:124 in sdpa_attention_forward (...)

Pure Python.
"""
from __future__ import annotations

import re

_CAUSED_BY_LINE = re.compile(r"^(?P<code>.*?)\s+# (?P<file>[^\s:]+):(?P<line>\d+) in (?P<func>[\w.<>]+)")


def caused_at(caused_by: str) -> tuple[str, str] | None:
    """(``file:line in func``, the code) that a ``Caused by:`` line ends with, or None."""
    match = _CAUSED_BY_LINE.search(caused_by or "")
    return (f"{match['file']}:{match['line']} in {match['func']}", match["code"].strip()) if match else None
