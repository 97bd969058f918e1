"""What changed between two measurements of one case, and its likeliest cause (issue #30;
docs/explain.md). The dashboard's "what changed" page, its API and the regression alerts read this.

A side is a plain dict: ``metrics``, ``compile_phases`` (contract.phases), ``kernel_profile``
(runner.engine.kernel_profile), ``graph_breaks``, ``recompiles`` and ``environment`` (flat: name ->
value, the build's and the machine's facts and the result's settings). ``explain(before, after)``:
- ``phases``: each compile phase, cold and warm, before / after / delta, and its share of the
  total's change;
- ``kernels``: every generated kernel and profiled operator, matched by name: slower, faster, new,
  gone, same name with different code (``changed``: the fingerprints differ; both normalised sources
  where kept), renamed (same code under another name) or same;
- ``graph_breaks`` / ``recompiles``: reasons added and removed; ``counts``: guards, graphs, kernels;
- ``status``: both statuses and the after side's whole error where the status changed (a side's
  ``status`` and ``error``, {type, message}); a case that stopped passing has no figures to explain:
  its cause is the status and the error's first line;
- ``environment``: side by side, differences first;
- ``cause``: the likeliest cause of the change of ``metric`` (compile time: the phase accounting for
  most of it; latency or speedup: the kernels; breaks: the new reasons), with its share; ``metric``:
  the metric it explains (without one asked for, the one that moved most past its noise).

Pure Python: no Django, no torch.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping

from contract.metrics import BY_NAME as METRICS_BY_NAME
from contract.metrics import COMPILE_TOTALS, phase_of
from contract.phases import BY_NAME as PHASES_BY_NAME
from contract.phases import COMPILE_SIDES, COUNTS, PHASE_NAMES, with_first_run

# A kernel or operator is slower / faster past both of these (one profiled call is noisy).
KERNEL_RELATIVE = 0.10
KERNEL_ABSOLUTE_MS = 0.005
COMPILE_METRICS = {"compile_time_cold_s": "cold", "compile_time_warm_s": "warm"}
KERNEL_METRICS = ("compiled_latency_ms", "speedup")
BREAK_METRICS = ("graph_break_count", "recompile_count")


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _relative(before: float | None, after: float | None) -> float | None:
    return None if not before or after is None else after / before - 1


def phase_rows(before: dict, after: dict) -> list[dict]:
    """Per side (cold, warm): the total, then each phase either side recorded."""
    rows = []
    for side in COMPILE_SIDES:
        a = (before.get("compile_phases") or {}).get(side) or {}
        b = (after.get("compile_phases") or {}).get(side) or {}
        if not a and not b:
            continue
        total_delta = _delta(a.get("total_s"), b.get("total_s"))
        rows.append({"side": side, "name": "total", "label": f"{side} compile, total", "before": a.get("total_s"),
                     "after": b.get("total_s"), "delta": total_delta, "relative": _relative(a.get("total_s"), b.get("total_s")),
                     "share": 1.0 if total_delta else None})
        pa, pb = a.get("phases") or {}, b.get("phases") or {}
        both = bool(pa) and bool(pb)  # a phase one compile lacks took no time there; a compile one side lacks, unknown
        for name in PHASE_NAMES:
            if name not in pa and name not in pb:
                continue
            delta = _delta(pa.get(name, 0.0), pb.get(name, 0.0)) if both else None
            rows.append({"side": side, "name": name, "label": PHASES_BY_NAME[name].label, "before": pa.get(name),
                         "after": pb.get(name), "delta": delta, "relative": _relative(pa.get(name), pb.get(name)),
                         "share": delta / total_delta if total_delta and delta is not None else None})
    return rows


def _profiled(side: dict) -> tuple[dict[str, dict], dict[str, dict]]:
    """(name -> generated kernel, name -> profiled row) of the compiled side."""
    profile = side.get("kernel_profile") or {}
    return ({k["name"]: k for k in profile.get("kernels") or []},
            {r["name"]: r for r in profile.get("compiled") or []})


def _kernel_status(before_ms: float | None, after_ms: float | None, changed: bool) -> str:
    if before_ms is not None and after_ms is not None:
        delta = after_ms - before_ms
        if abs(delta) >= KERNEL_ABSOLUTE_MS and abs(delta) >= KERNEL_RELATIVE * max(before_ms, 1e-9):
            return "slower" if delta > 0 else "faster"
    return "changed" if changed else "same"


def kernel_rows(before: dict, after: dict) -> list[dict]:
    """Kernels and profiled operators matched by name, biggest time change first; new and gone
    kernels whose code the other side has under another name are ``renamed``."""
    kernels_a, rows_a = _profiled(before)
    kernels_b, rows_b = _profiled(after)
    names = list(dict.fromkeys([*rows_b, *kernels_b, *rows_a, *kernels_a]))
    by_fingerprint_a = {k["fingerprint"]: name for name, k in kernels_a.items()}
    by_fingerprint_b = {k["fingerprint"]: name for name, k in kernels_b.items()}
    out = []
    for name in names:
        ka, kb = kernels_a.get(name), kernels_b.get(name)
        ra, rb = rows_a.get(name), rows_b.get(name)
        ms_a = (ra or {}).get("self_ms", (ka or {}).get("self_ms"))
        ms_b = (rb or {}).get("self_ms", (kb or {}).get("self_ms"))
        row = {"name": name, "generated": bool(ka or kb), "before_ms": ms_a, "after_ms": ms_b, "delta_ms": _delta(ms_a, ms_b),
               "before_count": (ra or ka or {}).get("count"), "after_count": (rb or kb or {}).get("count"),
               "before_fingerprint": (ka or {}).get("fingerprint"), "after_fingerprint": (kb or {}).get("fingerprint"),
               "renamed_from": None, "renamed_to": None}
        present_a, present_b = bool(ka or ra), bool(kb or rb)
        if present_a and not present_b:
            row["status"] = "gone"
            row["renamed_to"] = by_fingerprint_b.get((ka or {}).get("fingerprint"))
        elif present_b and not present_a:
            row["status"] = "new"
            row["renamed_from"] = by_fingerprint_a.get((kb or {}).get("fingerprint"))
        else:
            changed = bool(ka and kb and ka["fingerprint"] != kb["fingerprint"])
            row["status"] = _kernel_status(ms_a, ms_b, changed)
            row["code_changed"] = changed
            if changed and ka.get("source") and kb.get("source"):
                row["diff"] = side_by_side(ka["source"], kb["source"])
        if row["status"] in ("new", "gone") and (row["renamed_from"] or row["renamed_to"]):
            row["status"] = "renamed"
        out.append(row)
    order = {"slower": 0, "changed": 1, "new": 2, "gone": 3, "faster": 4, "renamed": 5, "same": 6}
    out.sort(key=lambda r: (order[r["status"]], -abs(r["delta_ms"] or 0.0), r["name"]))
    return out


def side_by_side(before: str, after: str, *, context: int = 3) -> list[dict]:
    """Rows of a side-by-side diff of two sources: ``{"kind": same|changed|removed|added|gap,
    "before", "after"}``, unchanged stretches cut to ``context`` lines around each change."""
    a, b = before.splitlines(), after.splitlines()
    rows: list[dict] = []
    for group in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_grouped_opcodes(context):
        if rows:
            rows.append({"kind": "gap", "before": "", "after": ""})
        for tag, i1, i2, j1, j2 in group:
            left, right = a[i1:i2], b[j1:j2]
            kind = {"equal": "same", "replace": "changed", "delete": "removed", "insert": "added"}[tag]
            for index in range(max(len(left), len(right))):
                rows.append({"kind": kind, "before": left[index] if index < len(left) else "",
                             "after": right[index] if index < len(right) else ""})
    return rows


def _reason_key(item: dict) -> str:
    key = item.get("reason", "")
    return key + f" ({item['location']})" if item.get("location") else key


# What counts as new: (old entries, new entries) -> the new entries that old lacks. The dashboard
# passes detection's (``detection.new_breaks`` / ``new_recompiles``: reasons compared on their first
# line with install paths and line numbers blanked, an unlocated break matched by reason), so that
# "added" here is what a finding calls new; by default an entry is new unless its text and location recur.
NewOf = Callable[[list[dict], list[dict]], list[dict]]


def _reasons(items: list[dict] | None) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in items or []:
        key = _reason_key(item)
        found[key] = found.get(key, 0) + int(item.get("count") or 1)
    return found


def _by_text(old: list[dict], new: list[dict]) -> list[dict]:
    seen = {_reason_key(item) for item in old}
    return [item for item in new if _reason_key(item) not in seen]


def reason_changes(before: list[dict] | None, after: list[dict] | None, new_of: NewOf | None = None) -> dict:
    """Reasons added and removed (``NewOf`` above), each with its count; totals on both sides."""
    before, after, new_of = before or [], after or [], new_of or _by_text
    return {"added": [{"reason": r, "count": n} for r, n in _reasons(new_of(before, after)).items()],
            "removed": [{"reason": r, "count": n} for r, n in _reasons(new_of(after, before)).items()],
            "before": sum(_reasons(before).values()), "after": sum(_reasons(after).values())}


def _headline(items: list[dict] | None, key: str, limit: int = 160) -> str:
    """A reason's first line and its location: Dynamo's graph-break reasons run to a paragraph of
    explanation, hints and debug context after their first line, which the cause would repeat (the
    whole reason stays in the report's added reasons)."""
    item = next((i for i in items or [] if _reason_key(i) == key), {"reason": key})
    line = next((ln.strip() for ln in (item.get("reason") or "").splitlines() if ln.strip()), "")
    line = line if len(line) <= limit else line[: limit - 1] + "…"
    return f"{line} ({item['location']})" if item.get("location") else line


def count_rows(before: dict, after: dict) -> list[dict]:
    rows = []
    for side in COMPILE_SIDES:
        ca = ((before.get("compile_phases") or {}).get(side) or {}).get("counts") or {}
        cb = ((after.get("compile_phases") or {}).get(side) or {}).get("counts") or {}
        rows += [{"side": side, "name": name, "before": ca.get(name), "after": cb.get(name),
                  "differs": ca.get(name) != cb.get(name)} for name in COUNTS if name in ca or name in cb]
    return rows


def environment_rows(before: dict, after: dict) -> list[dict]:
    """Both environments side by side, the differing keys first (then by name)."""
    a, b = before.get("environment") or {}, after.get("environment") or {}
    rows = [{"key": key, "before": a.get(key), "after": b.get(key), "differs": a.get(key) != b.get(key)}
            for key in sorted(set(a) | set(b))]
    rows.sort(key=lambda r: (not r["differs"], r["key"]))
    return rows


def _phase_cause(phases: list[dict], side: str) -> dict | None:
    candidates = [r for r in phases if r["side"] == side and r["name"] != "total" and r["delta"]]
    total = next((r for r in phases if r["side"] == side and r["name"] == "total"), None)
    if not candidates or not total or not total["delta"]:
        return None
    sign = 1 if total["delta"] > 0 else -1
    top = max(candidates, key=lambda r: sign * r["delta"])
    if sign * top["delta"] <= 0:
        return None
    share = top["delta"] / total["delta"]
    return {"kind": "phase", "name": top["name"], "side": side, "share": share,
            "text": f"{top['label']} ({side}): {_seconds(top['before'])} -> {_seconds(top['after'])}, "
                    f"{share:.0%} of the {side} compile's change of {total['delta']:+.3g} s"}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g} s"


def _kernel_contributions(kernels: list[dict]) -> tuple[list[tuple[dict, float]], float, int, int]:
    """(kernel, ms a call it moved) for kernels on both sides, and the time of the kernels that
    appeared or went (a new kernel adds its time, a gone one takes its time away; a renamed pair
    is one kernel): (moved, replaced net ms, new count, gone count)."""
    by_name = {k["name"]: k for k in kernels}
    moved: list[tuple[dict, float]] = []
    replaced, new, gone = 0.0, 0, 0
    for k in kernels:
        if k["status"] == "renamed":
            if k.get("renamed_to") and k.get("before_ms") is not None:
                after = (by_name.get(k["renamed_to"]) or {}).get("after_ms")
                if after is not None:
                    moved.append((k, after - k["before_ms"]))
        elif k["status"] == "new" and k.get("after_ms"):
            replaced, new = replaced + k["after_ms"], new + 1
        elif k["status"] == "gone" and k.get("before_ms"):
            replaced, gone = replaced - k["before_ms"], gone + 1
        elif k.get("delta_ms"):
            moved.append((k, k["delta_ms"]))
    return moved, replaced, new, gone


def _kernel_cause(kernels: list[dict], slower: bool) -> dict | None:
    """The kernel whose time moved most in the metric's direction, or, where that is more, the
    kernels that appeared and went together (a fusion change splits or merges kernels: measured on
    an H100 with inductor.max_fusion_size=1, bench/results/explain/)."""
    moved, replaced, new, gone = _kernel_contributions(kernels)
    along = [(k, d) for k, d in moved if (d > 0) == slower]
    total = sum(d for _, d in along) + (replaced if (replaced > 0) == slower and replaced else 0.0)
    top = max(along, key=lambda kd: abs(kd[1]), default=None)
    if replaced and (replaced > 0) == slower and (top is None or abs(replaced) > abs(top[1])):
        return {"kind": "kernel", "name": "kernels new and gone", "share": replaced / total if total else None,
                "text": f"profiled kernels {new} new and {gone} gone (fused differently): "
                        f"{replaced:+.4g} ms a call, {replaced / total:.0%} of the profiled kernels' change"}
    if top is not None:
        k, delta = top
        after = k["after_ms"] if k["status"] != "renamed" else k["before_ms"] + delta
        code = " (its code changed)" if k.get("code_changed") else ""
        renamed = f" (now {k['renamed_to']})" if k["status"] == "renamed" else ""
        return {"kind": "kernel", "name": k["name"], "share": delta / total if total else None,
                "text": f"{k['name']}{renamed}{code}: {k['before_ms']:.4g} -> {after:.4g} ms a call, "
                        f"{delta / total:.0%} of the profiled kernels' change"}
    changed = [k for k in kernels if k["status"] in ("changed", "new", "gone")]
    if changed:
        names = ", ".join(k["name"] for k in changed[:3])
        return {"kind": "kernel", "name": changed[0]["name"], "share": None,
                "text": f"generated code differs: {names}" + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")}
    return None


def explained_metric(metric: str | None, before: dict, after: dict) -> str | None:
    """The metric whose change the cause explains: ``metric`` (a compile phase's: its compile's total),
    else the one that moved most past its noise, its relative change over the registry's noise default
    (contract.metrics): compile time is noisy (15 %), so on an H100 inductor.max_fusion_size=1's +11 %
    compile time is less of a change than its +2.6 % latency (bench/results/explain/)."""
    if metric is None:
        metrics_a, metrics_b = before.get("metrics") or {}, after.get("metrics") or {}
        moved = {m: abs(_relative(metrics_a.get(m), metrics_b.get(m)) or 0.0) / METRICS_BY_NAME[m].noise_default
                 for m in (*COMPILE_METRICS, "compiled_latency_ms")}
        metric = max(moved, key=moved.get) if any(moved.values()) else None
    if metric is not None and phase_of(metric) is not None:  # a phase's metric: its compile's phases (contract.metrics)
        metric = COMPILE_TOTALS[phase_of(metric)[0]]
    return metric


def error_text(error) -> str:
    """A result's error ({type, message}, or text) as one text: ``type: message``."""
    error = error or {}
    if isinstance(error, str):
        return error
    kind, message = error.get("type") or "", error.get("message") or ""
    return f"{kind}: {message}" if kind and message else kind or message


def status_change(before: dict, after: dict) -> dict | None:
    """Both statuses and the errors where the status changed (None where it did not, or neither side
    says): the after side's error whole, as measured."""
    old, new = before.get("status"), after.get("status")
    if not old or not new or old == new:
        return None
    return {"before": old, "after": new, "error": error_text(after.get("error")), "before_error": error_text(before.get("error"))}


def _status_cause(change: dict | None) -> dict | None:
    if change is None:
        return None
    error = change["error"] if change["after"] != "pass" else change["before_error"]
    line = next((ln.strip() for ln in error.splitlines() if ln.strip()), "")
    line = line if len(line) <= 300 else line[:299] + "…"
    text = f"status {change['before']} -> {change['after']}" + (f": {line}" if line else "")
    return {"kind": "status", "name": "status", "share": None, "text": text}


def likeliest_cause(report: dict, metric: str | None, before: dict, after: dict) -> dict | None:
    """The phase, kernels or graph breaks that account for most of ``metric``'s change; a case whose
    status changed: the status and its error (a failing side has no figures to explain)."""
    if report.get("status"):
        return _status_cause(report["status"])
    metrics_a, metrics_b = before.get("metrics") or {}, after.get("metrics") or {}
    metric = explained_metric(metric, before, after)
    if metric in COMPILE_METRICS:
        return _phase_cause(report["phases"], COMPILE_METRICS[metric])
    if metric in KERNEL_METRICS:
        slower = True  # compiled got slower: a lower speedup or a higher latency
        if metric == "speedup" and (metrics_b.get("speedup") or 0) > (metrics_a.get("speedup") or 0):
            slower = False
        elif metric == "compiled_latency_ms" and (metrics_b.get(metric) or 0) < (metrics_a.get(metric) or 0):
            slower = False
        return _kernel_cause(report["kernels"], slower)
    if metric in BREAK_METRICS:
        side = "graph_breaks" if metric == "graph_break_count" else "recompiles"
        changes = report[side]
        if changes["added"]:
            first = changes["added"][0]
            headline = _headline(after.get(side), first["reason"])
            return {"kind": "graph_breaks", "name": metric, "share": None, "text": f"new: {headline} (x{first['count']})"}
    return None


# A finding's metric (dashboard.regressions: a metric's name, or graph_breaks / recompiles / status /
# dynamic_gap) as the metric this module explains; None where it explains none.
FINDING_METRICS = {"graph_breaks": "graph_break_count", "recompiles": "recompile_count"}


def finding_metric(metric: str) -> str | None:
    phase = phase_of(metric)
    if phase is not None:  # a phase of the cold or warm compile (contract.metrics): that compile's change
        return COMPILE_TOTALS[phase[0]]
    explained = FINDING_METRICS.get(metric, metric)
    return explained if explained in (*COMPILE_METRICS, *KERNEL_METRICS, *BREAK_METRICS) else None


def with_first_runs(side: dict) -> dict:
    """The side with each compile record's ``first_run`` phase where it lacks one (a result measured
    before the phase existed): the first call's wall time (an exporting path's ``first_call_s``, else
    the cold or warm compile time, which is the first call for ``torch.compile``) less the records'
    total, as the runner derives it (``contract.phases.with_first_run``). A path's warm first call is
    not recorded apart: its warm record is left as it is."""
    records = side.get("compile_phases") or {}
    if not any(isinstance(r, dict) and r.get("phases") and "first_run" not in r["phases"] for r in records.values()):
        return side
    metrics, path = side.get("metrics") or {}, side.get("path_phases") or {}
    first_call = {"cold": path.get("first_call_s") if path else metrics.get("compile_time_cold_s"),
                  "warm": None if path else metrics.get("compile_time_warm_s")}
    completed = {}
    for name, record in records.items():
        if isinstance(record, dict) and record.get("phases") and "first_run" not in record["phases"] and first_call.get(name):
            record = with_first_run({**record, "phases": dict(record["phases"])}, first_call[name])
        completed[name] = record
    return {**side, "compile_phases": completed}


def explain(before: dict, after: dict, *, metric: str | None = None, new_of: Mapping[str, NewOf] | None = None) -> dict:
    """``new_of``: per ``graph_breaks`` / ``recompiles``, what counts as a new reason (``NewOf``)."""
    before, after = with_first_runs(before), with_first_runs(after)
    report = {
        "phases": phase_rows(before, after),
        "counts": count_rows(before, after),
        "kernels": kernel_rows(before, after),
        **{side: reason_changes(before.get(side), after.get(side), (new_of or {}).get(side)) for side in ("graph_breaks", "recompiles")},
        "environment": environment_rows(before, after),
        "status": status_change(before, after),
    }
    # the metric the cause explains: a changed status is the change, whatever else moved
    report["metric"] = "status" if report["status"] else explained_metric(metric, before, after)
    report["cause"] = likeliest_cause(report, report["metric"], before, after)
    return report
