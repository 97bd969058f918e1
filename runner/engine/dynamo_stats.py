"""What dynamo did: graph breaks (count, reasons, source locations), unique graphs, recompiles.

Sources, by torch version:
- ``torch._dynamo.utils.counters``: ``graph_break`` and ``unimplemented`` (reason -> count) and
  ``stats.unique_graphs`` after the first compiled call; the authoritative counts. Since torch 2.12
  or so, breaks raised through ``unimplemented`` (data-dependent branching, some skipped frames)
  land only in ``unimplemented``; ``graph_break`` alone under-counts them.
- ``torch._dynamo.explain``: a separate trace with dynamo's own recording backend that gives each
  break's user stack; it runs only when the compile had breaks, after everything else (it resets
  dynamo), and is where locations come from.
- ``torch._dynamo.utils.guard_failures`` (code -> guard-failure reasons, one per recompiled frame):
  recompiles and their reasons; where it is missing, the growth of ``counters["frames"]["total"]``
  still counts them.
"""
from __future__ import annotations

import collections
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from runner.engine import compat

REASON_LIMIT = 4000
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_COMPILE_ID = re.compile(r"^\s*\[?\d+/\d+\]?:\s*")


def short_path(filename: str) -> str:
    """A path that reads the same on every machine: repo-relative, or from site-packages on."""
    absolute = os.path.abspath(filename)
    if absolute.startswith(_REPO_ROOT + os.sep):
        return os.path.relpath(absolute, _REPO_ROOT)
    marker = "site-packages" + os.sep
    if marker in absolute:
        return absolute.split(marker, 1)[1]
    return filename


@dataclass
class CompileCounters:
    graph_breaks: dict[str, int] = field(default_factory=dict)  # reason -> count
    unique_graphs: int | None = None
    available: bool = False

    @property
    def graph_break_count(self) -> int | None:
        return sum(self.graph_breaks.values()) if self.available else None


def read_compile_counters() -> CompileCounters:
    """Snapshot of dynamo's counters (call right after the first compiled call)."""
    counters = compat.dynamo_counters()
    if counters is None:
        return CompileCounters()
    breaks: dict[str, int] = {}
    for group in ("graph_break", "unimplemented"):
        for reason, count in counters.get(group, {}).items():
            if count:
                text = str(reason).strip()
                # One event is never recorded in both groups; if a reason ever is, count it once.
                breaks[text] = max(breaks.get(text, 0), int(count))
    stats = counters.get("stats", {})
    unique = stats.get("unique_graphs")
    return CompileCounters(graph_breaks=breaks, unique_graphs=int(unique) if unique is not None else None, available=True)


def cache_counters() -> dict[str, int]:
    """Compile-cache hits and misses (FX graph, AOTAutograd): says whether a warm compile was warm."""
    counters = compat.dynamo_counters() or {}
    found: dict[str, int] = {}
    for group in ("inductor", "aot_autograd"):
        for name, count in counters.get(group, {}).items():
            if "cache" in name:
                found[name] = int(count)
    return found


def _location(frame: Any) -> str | None:
    filename = getattr(frame, "filename", None)
    if filename is None:
        return None
    return f"{short_path(filename)}:{getattr(frame, 'lineno', '?')} in {getattr(frame, 'name', '?')}"


@dataclass(frozen=True)
class ExplainedBreaks:
    entries: list[dict]  # [{reason, location, count}]
    graph_count: int | None


def explain_graph_breaks(fn: Callable[..., Any], args: Sequence[Any]) -> ExplainedBreaks:
    """Trace ``fn(*args)`` with ``torch._dynamo.explain`` and group its breaks by (reason, location).

    Resets dynamo before and after (explain does): call it last. Raises what explain raises.
    """
    explain = compat.explain()
    if explain is None:
        raise compat.MissingTorchAPI("this torch has no torch._dynamo.explain")
    output = explain(fn)(*args)
    grouped: collections.Counter[tuple[str, str | None]] = collections.Counter()
    for reason in getattr(output, "break_reasons", []):
        text = str(getattr(reason, "reason", reason)).strip()[:REASON_LIMIT] or "unknown"
        stack = list(getattr(reason, "user_stack", None) or [])
        grouped[(text, _location(stack[-1]) if stack else None)] += 1
    entries = [{"reason": r, "location": loc, "count": n} for (r, loc), n in grouped.items()]
    return ExplainedBreaks(entries=entries, graph_count=getattr(output, "graph_count", None))


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+), in ([\w<>.]+)')


def location_in_text(reason: str) -> str | None:
    """Some reasons quote the user code (``File "x.py", line 5, in f``): the last such frame."""
    found = _FILE_LINE.findall(reason)
    if not found:
        return None
    filename, line, name = found[-1]
    return f"{short_path(filename)}:{line} in {name}"


def breaks_from_counters(counters: CompileCounters) -> list[dict]:
    """The counters' reasons, located where the reason text quotes the user's code."""
    return [
        {"reason": reason[:REASON_LIMIT] or "unknown", "location": location_in_text(reason), "count": n}
        for reason, n in counters.graph_breaks.items()
    ]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def locate_breaks(entries: list[dict], explained: list[dict]) -> list[dict]:
    """Give each counter reason without a location the location(s) explain found for that reason.

    Counts and reason texts stay the counters' (explain traces again and can miss or rename breaks,
    e.g. an explicit ``torch._dynamo.graph_break()`` or "generic_jump" for data-dependent branching).
    One reason hit at several places is split by place when explain's counts add up to the counter's.
    """
    by_reason: dict[str, list[dict]] = {}
    for entry in explained:
        if entry.get("location"):
            by_reason.setdefault(_first_line(entry["reason"]), []).append(entry)
    located: list[dict] = []
    for entry in entries:
        places = by_reason.get(_first_line(entry["reason"]), [])
        if entry["location"] or not places:
            located.append(entry)
        elif sum(p["count"] for p in places) == entry["count"]:
            located += [dict(entry, location=p["location"], count=p["count"]) for p in places]
        else:
            located.append(dict(entry, location=places[0]["location"]))
    return located


def strip_compile_id(reason: str) -> str:
    """``"0/0: tensor 'x' size mismatch ..."`` -> ``"tensor 'x' size mismatch ..."`` (ids vary by run)."""
    return _COMPILE_ID.sub("", reason, count=1).strip()


class RecompileWatcher:
    """Counts recompilations, with their guard-failure reasons, while the ``with`` block runs."""

    def __init__(self) -> None:
        self.count: int | None = None
        self.reasons: list[dict] = []

    def _frames_total(self) -> int | None:
        counters = compat.dynamo_counters()
        if counters is None:
            return None
        return int(counters.get("frames", {}).get("total", 0))

    def __enter__(self) -> "RecompileWatcher":
        failures = compat.guard_failures()
        self._failures = failures
        self._before = {code: len(reasons) for code, reasons in failures.items()} if failures is not None else {}
        self._frames_before = self._frames_total()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._failures is not None:
            new = [
                strip_compile_id(str(reason))[:REASON_LIMIT] or "unknown guard failure"
                for code, reasons in list(self._failures.items())
                for reason in reasons[self._before.get(code, 0):]
            ]
            self.count = len(new)
            self.reasons = [{"reason": r, "count": n} for r, n in collections.Counter(new).items()]
            return
        frames_after = self._frames_total()
        if frames_after is not None and self._frames_before is not None:
            self.count = frames_after - self._frames_before
            if self.count:
                self.reasons = [{"reason": "guard failure (reasons unavailable in this torch)", "count": self.count}]


def second_call_recompiles(call: Callable[[], Any], *, stop_before_compiling: bool) -> tuple[RecompileWatcher, bool]:
    """Run ``call`` (the compiled function on the second shape) counting its recompiles; and whether
    it was stopped at its recompile, before compiling.

    ``stop_before_compiling`` (a static case whose compile made one graph, no break: one frame)
    records the recompile's guard-failure reason as the real recompile would, then stops it
    (``compat.recompile_stopper``): the count and reasons are the same as compiling again would
    give, without paying for a second compile. A program of several frames needs every frame run
    (each recompiles in turn), so it is called as it is.
    """
    stopper = compat.recompile_stopper() if stop_before_compiling else None
    with RecompileWatcher() as watcher:
        if stopper is None:
            call()
            return watcher, False
        stopping, error = stopper
        try:
            with stopping():
                call()
        except Exception as exc:
            if not _caused_by(exc, error):  # a wrapped RecompileError counts as one; anything else is the call's
                raise
            return watcher, True
    return watcher, False


def _caused_by(exc: BaseException, error: type[BaseException]) -> bool:
    """``exc`` is ``error`` or was raised from or during one (a torch build that wraps it)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, error):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
