"""The workload page's compile-phase charts (docs/explain.md): one per compile (cold, warm), a line
per phase of contract.phases and the total, over builds. Left out where no build recorded phases
(run documents of version 1)."""
from __future__ import annotations

from contract.phases import COMPILE_SIDES, PHASES


def _value(point, side: str, phase: str | None):
    record = (point.compile_phases or {}).get(side) or {}
    return record.get("total_s") if phase is None else (record.get("phases") or {}).get(phase)


def phase_charts(points, *, sig) -> list[dict]:
    charts = []
    for side in COMPILE_SIDES:
        lines = [{"name": f"{side} total", "y": [sig(_value(p, side, None)) for p in points]}]
        lines += [{"name": phase.label, "y": [sig(_value(p, side, phase.name)) for p in points]} for phase in PHASES]
        lines = [line for line in lines if any(v is not None for v in line["y"])]
        if lines:
            charts.append({"id": f"series-phases-{side}", "title": f"{side} compile by phase (s)", "unit": "seconds",
                           "lines": lines, "markers": [], "from_zero": True, "host": []})
    return charts
