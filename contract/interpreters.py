"""Which interpreter a worker runs when the dashboard names one (issue #46 item 5).

The admin's *Build environments -> Add* sends a ``python`` path to the workers of a machine class,
which probe it (run it as argv[0]). A worker runs only its own builds (``PTBENCH_BUILDS``), its own
interpreter, and interpreters under a directory its operator lists in ``PTBENCH_BUILDS_ROOT``
(comma-separated absolute paths); anything else is refused on the worker, whatever the dashboard
says. The path is judged as written, ``..`` collapsed (a symlink the operator put under the root is
the operator's choice).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

ROOTS_VARIABLE = "PTBENCH_BUILDS_ROOT"


def builds_roots(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The directories ``PTBENCH_BUILDS_ROOT`` lists (relative entries are ignored: refused by ``roots_problem``)."""
    return tuple(part.strip() for part in environ.get(ROOTS_VARIABLE, "").split(",") if part.strip())


def roots_problem(roots: Iterable[str]) -> str | None:
    relative = [root for root in roots if not os.path.isabs(root)]
    return f"{ROOTS_VARIABLE}: {', '.join(relative)} not an absolute path" if relative else None


def interpreter_refusal(python: str, *, roots: Iterable[str], known: Iterable[str] = ()) -> str | None:
    """Why a worker with ``roots`` and its own interpreters ``known`` must not run ``python`` (None: it may)."""
    roots = tuple(roots)
    if python in set(known):
        return None
    if not python or not os.path.isabs(python):
        return f"{python!r} is not an absolute path"
    normal = os.path.normpath(python)
    for root in roots:
        base = os.path.normpath(root)
        if os.path.isabs(base) and normal.startswith(base.rstrip(os.sep) + os.sep):
            return None
    listed = ", ".join(roots) or "unset"
    return (f"{python!r} is not one of this worker's builds nor under {ROOTS_VARIABLE} ({listed}): a worker runs only "
            "its own interpreters (PTBENCH_BUILDS) and those under that root")
