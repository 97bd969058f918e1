"""A name nobody knows, said so with what was probably meant (issue #42 item 6): the API, the pages
and the CLI answer an unknown machine class, workload or filter value with one message, e.g.

    unknown machine class 'cpu-amd-epyc-4c'; did you mean 'cpu-amd-epyc-2c'? (known: cpu, cpu-amd-epyc-2c)

Pure Python (``difflib``), no Django."""
from __future__ import annotations

import difflib
from collections.abc import Iterable

SHOWN = 12  # known values listed in a message at most


def did_you_mean(value: str, known: Iterable[str]) -> str | None:
    """The known value closest to ``value`` (case-insensitive), or None when none is close."""
    known = list(known)
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def unknown_message(what: str, value: str, known: Iterable[str]) -> str:
    """``unknown <what> '<value>'; did you mean '<x>'? (known: ...)``; the list cut at ``SHOWN``."""
    known = sorted(set(known))
    guess = did_you_mean(value, known)
    hint = f"; did you mean {guess!r}?" if guess else ""
    if len(known) > 3 * SHOWN:  # a list that long is no help in a message
        return f"unknown {what} {value[:80]!r}{hint} ({len(known)} known)"
    listed = ", ".join(known[:SHOWN]) + (f", ... ({len(known)} in all)" if len(known) > SHOWN else "")
    return f"unknown {what} {value[:80]!r}{hint} (known: {listed or 'none yet'})"
