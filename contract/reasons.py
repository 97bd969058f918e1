"""Why a run was measured (``Run.reason``; docs/architecture.md, "Run reasons"): the one list of
reasons, read from the run document's schema (``run.reason``), which the API, the runner's and CI's
``--reason``, storage, detection and alerts all take from here.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

from contract.document import load_schema

RUN_REASONS: tuple[str, ...] = tuple(load_schema()["properties"]["run"]["properties"]["reason"]["enum"])
NIGHTLY, REQUESTED, REMEASUREMENT, BISECTION = RUN_REASONS

DOCUMENT_DEFAULT = NIGHTLY  # a run document without ``run.reason`` (every version-1 document before it)
REQUEST_DEFAULT = REQUESTED  # a run requested through the API, CI or the admin
# Runs that raise findings (and so alerts) of their own: a re-measurement only decides the suspects
# it was asked for, a bisection run nothing.
FINDING_REASONS: frozenset[str] = frozenset({NIGHTLY, REQUESTED})
# Runs whose results are points of their series: all but bisection runs.
SERIES_REASONS: tuple[str, ...] = tuple(r for r in RUN_REASONS if r != BISECTION)
