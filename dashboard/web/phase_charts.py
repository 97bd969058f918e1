"""The workload page's compile-phase charts (docs/explain.md): one per compile (cold, warm), a line
per phase of contract.phases and the total, over builds. Left out where no build recorded phases
(run documents of version 1)."""
from __future__ import annotations

from contract.metrics import COMPILE_TOTALS, phase_metric
from contract.phases import COMPILE_SIDES, PHASES


def _value(point, side: str, phase: str | None):
    record = (point.compile_phases or {}).get(side) or {}
    return record.get("total_s") if phase is None else (record.get("phases") or {}).get(phase)


def phase_charts(points, *, sig, markers=()) -> list[dict]:
    """``markers``: the series' findings; its compile's total's (compile_time_cold_s, compile_time_warm_s:
    the phases explain it, contract.metrics) and a phase's stored before phases stopped raising findings
    (``compile_phase_<phase>_s``, ``compile_phase_warm_<phase>_s``) are marked on that compile's chart."""
    index = {p.build_id: i for i, p in enumerate(points)}
    labels = {phase_metric(side, phase.name): (side, phase.label) for side in COMPILE_SIDES for phase in PHASES}
    labels.update({total: (side, f"{side} total") for side, total in COMPILE_TOTALS.items()})
    charts = []
    for side in COMPILE_SIDES:
        lines = [{"name": f"{side} total", "y": [sig(_value(p, side, None)) for p in points]}]
        lines += [{"name": phase.label, "y": [sig(_value(p, side, phase.name)) for p in points]} for phase in PHASES]
        lines = [line for line in lines if any(v is not None for v in line["y"])]
        if lines:
            marked = [{"i": index[m.build_id], "kind": m.kind, "text": f"{labels[m.metric][1]}: {m.kind} {m.status}"
                       + (f" ({m.change_text})" if m.change_text else "")}
                      for m in markers if labels.get(m.metric, ("",))[0] == side and m.build_id in index]
            charts.append({"id": f"series-phases-{side}", "title": f"{side} compile by phase (s)", "unit": "seconds",
                           "lines": lines, "markers": marked, "from_zero": True, "host": []})
    return charts
