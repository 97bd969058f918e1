"""Deterministic findings: a metric that changes or does not, reported exactly with its reason text.

Inputs are plain dicts shaped like a run document's result (``contract/schema/run_document.v2.json``):
``status`` (str), ``graph_breaks`` (list of {reason, location, count}), ``recompile_count`` (int, or
``metrics.recompile_count``), ``recompiles`` (list of {reason, count}) and ``error``
({type, message} or None). Every worsening is a finding; fixes are findings of kind 'fixed' with
``regression=False`` so the dashboard can show them without alerting.

Reasons are compared on a normalised key: the reason's first line (Dynamo's graph-break type, e.g.
"Data-dependent branching", or a guard failure), with hex addresses, unbacked symbol numbers such as
``u0``, install paths (``.../site-packages/torch/x.py`` -> ``torch/x.py``) and source line numbers
blanked; the location is compared beside it. So the same break measured twice, or by two releases
that reword its explanation and hints or move torch's own source lines, is not new (seen across
2.11 -> 2.12 -> 2.13); the finding carries the reason's full text as measured.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Sequence

PASS = "pass"
# Failures that say as much about the machine as about the build (memory other processes took on a
# shared GPU, a loaded host): a case already failing that now fails so is no regression (an unchanged
# build's llama_decode aot_inductor went crash -> oom on a GPU shared by nine streams,
# bench/results/real-verdicts-families-*.txt). From a pass they are: ``started_failing``.
MACHINE_FAILURES = frozenset({"oom", "timeout"})

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_SYM = re.compile(r"\b([usqf])\d+\b")
_TRAILER = re.compile(r"\s*For more details about this graph break.*", re.S)
_SPACE = re.compile(r"\s+")
_LINE_NUMBER = re.compile(r"(\.py):\d+")
# An absolute path up to the package it is in: a venv's site-packages, or this repository's checkout.
_INSTALL_PREFIX = re.compile(r"(?:/[^\s/`'\"(),:]+)*/(?:site-packages|dist-packages)/|(?:/[^\s/`'\"(),:]+)*/(?=(?:workloads|runner|tests)/)")


@dataclass(frozen=True)
class Finding:
    kind: str  # started_failing | status_changed | fixed | new_graph_break | more_graph_breaks |
    #            new_recompile_reason | more_recompiles | dynamic_gap
    message: str  # one line for the triage page
    reasons: tuple[str, ...] = ()  # the new reason text(s), as measured
    regression: bool = True
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["reasons"] = list(self.reasons)
        return out


def reason_key(reason: str | None) -> str:
    text = _first_line(_TRAILER.sub("", reason or ""), limit=10_000)
    text = _INSTALL_PREFIX.sub("", text)
    text = _LINE_NUMBER.sub(r"\1:?", text)
    text = _HEX.sub("0x?", text)
    text = _SYM.sub(r"\1?", text)
    return _SPACE.sub(" ", text).strip()


def _first_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _recompile_count(case: dict) -> int:
    count = case.get("recompile_count")
    if count is None:
        count = (case.get("metrics") or {}).get("recompile_count")
    if count is None:
        count = sum(int(r.get("count") or 1) for r in case.get("recompiles") or [])
    return int(count or 0)


def _break_identity(entry: dict) -> tuple[str, str]:
    """The reason's normalised key and the location. Locations inside torch move between releases:
    their line numbers are blanked like the reason's."""
    location = str(entry.get("location") or "")
    return reason_key(entry.get("reason")), _LINE_NUMBER.sub(r"\1:?", location) if location.startswith("torch/") else location


def _breaks(case: dict) -> dict[tuple[str, str], dict]:
    out: dict[tuple[str, str], dict] = {}
    for gb in case.get("graph_breaks") or []:
        key = _break_identity(gb)
        entry = out.setdefault(key, {"reason": gb.get("reason") or "", "location": gb.get("location"), "count": 0})
        entry["count"] += int(gb.get("count") or 1)
    return out


def _error_text(case: dict) -> str:
    err = case.get("error")
    if not err:
        return ""
    if isinstance(err, str):
        return err
    kind, message = err.get("type") or "", err.get("message") or ""
    return f"{kind}: {message}" if kind and message else kind or message


def new_breaks(old: list[dict] | None, new: list[dict] | None) -> list[dict]:
    """The graph breaks of ``new`` that ``old`` lacks ({reason, location, count}, counts summed per
    normalised reason and location): what a "new graph-break reason" finding reports, and what
    /explain/ lists as added (``contract.explain.reason_changes``)."""
    old_b, new_b = _breaks({"graph_breaks": old}), _breaks({"graph_breaks": new})
    # A location that one build could not tell (""), matched by reason alone: reporting it is not a new break.
    old_unlocated = {reason for reason, location in old_b if not location}
    old_reasons = {reason for reason, _ in old_b}
    return [new_b[k] for k in new_b if k not in old_b and k[0] not in old_unlocated and not (not k[1] and k[0] in old_reasons)]


def new_recompiles(old: list[dict] | None, new: list[dict] | None) -> list[dict]:
    """The recompile reasons of ``new`` whose normalised key ``old`` lacks (as measured)."""
    old_r = {reason_key(r.get("reason")) for r in old or []}
    return [r for r in new or [] if reason_key(r.get("reason")) not in old_r]


def compare_cases(previous: dict | None, current: dict) -> list[Finding]:
    """Findings of ``current`` against the same case on the previous build (None: first time seen,
    then only a failing status is reported)."""
    findings: list[Finding] = []
    status = current.get("status") or ""
    before = (previous or {}).get("status")
    if status != PASS and before in (None, PASS):
        err = _error_text(current)
        findings.append(Finding(
            "started_failing",
            f"started failing: {before or 'new case'} -> {status}" + (f": {_first_line(err)}" if err else ""),
            (err,) if err else (), True, {"before": before, "after": status}))
    elif status != PASS and before != status:
        err = _error_text(current)
        findings.append(Finding("status_changed", f"status {before} -> {status}" + (f": {_first_line(err)}" if err else ""),
                                (err,) if err else (), status not in MACHINE_FAILURES, {"before": before, "after": status}))
    elif status == PASS and before not in (None, PASS):
        findings.append(Finding("fixed", f"fixed: {before} -> pass", (), False, {"before": before, "after": status}))
    if previous is None or status != PASS or before != PASS:
        return findings  # breaks and recompiles are only comparable between two passing runs

    old_b, new_b = _breaks(previous), _breaks(current)
    added = new_breaks(previous.get("graph_breaks"), current.get("graph_breaks"))
    old_total = sum(e["count"] for e in old_b.values())
    new_total = sum(e["count"] for e in new_b.values())
    if added:
        where = ", ".join(str(e["location"]) for e in added if e["location"]) or "unknown location"
        findings.append(Finding(
            "new_graph_break",
            f"{len(added)} new graph break reason{'s' if len(added) > 1 else ''} at {where}: {_first_line(added[0]['reason'])}",
            tuple(e["reason"] for e in added), True,
            {"locations": [e["location"] for e in added], "counts": [e["count"] for e in added],
             "before": old_total, "after": new_total}))
    if not added and new_total > old_total:
        grown = [new_b[k] for k in new_b if new_b[k]["count"] > old_b.get(k, {"count": 0})["count"]]
        findings.append(Finding(
            "more_graph_breaks", f"graph breaks {old_total} -> {new_total} (same reasons)",
            tuple(e["reason"] for e in grown), True, {"before": old_total, "after": new_total}))

    new_reasons = [r.get("reason") or "" for r in new_recompiles(previous.get("recompiles"), current.get("recompiles"))]
    old_n, new_n = _recompile_count(previous), _recompile_count(current)
    if new_reasons:
        findings.append(Finding(
            "new_recompile_reason",
            f"recompiles {old_n} -> {new_n}, new guard failure: {_first_line(new_reasons[0])}",
            tuple(new_reasons), True, {"before": old_n, "after": new_n}))
    elif new_n > old_n:
        findings.append(Finding("more_recompiles", f"recompiles {old_n} -> {new_n} (same reasons)", (), True,
                                {"before": old_n, "after": new_n}))
    return findings


def dynamic_gap(
    backed: Sequence[float | None],
    unbacked: Sequence[float | None],
    *,
    threshold: float = 0.05,
) -> list[Finding]:
    """Gap between unbacked and backed dynamic-shape speedups on the newest build.

    ``backed`` / ``unbacked``: speedups per build, oldest first (None where a case did not pass).
    The gap is shown as the ratio unbacked/backed (0.81: unbacked 19 % slower) and stored in
    ``details`` as ``gap`` = ratio - 1 (negative: unbacked is slower). A finding when the newest
    build's ratio is below ``1 - threshold`` while the previous build with both values was not (the
    gap opened), with both ratios in the message. Returns [] otherwise.
    """
    if len(backed) != len(unbacked):
        raise ValueError(f"backed has {len(backed)} builds, unbacked {len(unbacked)}")
    ratios = [(i, u / b) for i, (b, u) in enumerate(zip(backed, unbacked))
              if b is not None and u is not None and b > 0 and u > 0]
    if len(ratios) < 1 or ratios[-1][0] != len(backed) - 1:
        return []
    now = ratios[-1][1]
    before = ratios[-2][1] if len(ratios) >= 2 else None
    if now < 1 - threshold and (before is None or before >= 1 - threshold):
        change = f"{before:.3f} -> {now:.3f}" if before is not None else f"{now:.3f} (first build with both)"
        return [Finding("dynamic_gap", f"unbacked/backed speedup {change}, below {1 - threshold:.2f}", (), True,
                        {"gap": now - 1, "previous_gap": None if before is None else before - 1, "threshold": threshold})]
    return []
