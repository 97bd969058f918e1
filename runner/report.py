"""The run's report: the run document (validated) and the summary table printed at the end."""
from __future__ import annotations

import datetime as dt
import uuid
from typing import Sequence

from contract.case_config import SHORT, SHOWN_AXES
from contract.document import SCHEMA_VERSION, build_section, check_document
from contract.metrics import COMPILE_TIMES


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def machine_section(environment: dict, *, machine_class: str) -> dict:
    return {**environment["machine"], "machine_class": machine_class}


def build_document(
    *,
    size: str,
    environment: dict,
    machine_class: str,
    build_label: str | None,
    workloads: Sequence[object],
    results: list[dict],
    started_at: str,
    finished_at: str,
    command: str,
    requested_by: str,
    notes: str = "",
    reason: str | None = None,
) -> dict:
    """Assemble and check the document; raises ``contract.document.InvalidDocument`` naming bad fields."""
    run = {
        "id": str(uuid.uuid4()),
        "suite": size,  # the document's name for the size (schema version 1)
        "started_at": started_at,
        "finished_at": finished_at,
        "command": command[:4000],
        "requested_by": requested_by[:200],
        "synthetic": False,
    }
    if notes:
        run["notes"] = notes[:4000]
    if reason is not None:  # absent: the dashboard stores a nightly (contract.reasons)
        run["reason"] = reason
    declared: dict[str, dict] = {}
    for workload in workloads:
        declared.setdefault(workload.name, workload.describe())
    document = {
        "schema_version": SCHEMA_VERSION,
        "run": run,
        "build": build_section(environment, label=build_label),
        "machine": machine_section(environment, machine_class=machine_class),
        "workloads": list(declared.values()),
        "results": results,
    }
    return check_document(document)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _number(value: float | None, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def _speedup_cell(metrics: dict) -> str:
    speedup, noise = metrics.get("speedup"), metrics.get("speedup_noise")
    if speedup is None:
        return "-"
    return f"{speedup:.3f}x" + (f" ±{noise * 100:.1f}%" if noise is not None else "")


def _compile_cell(metrics: dict) -> str:
    return "/".join(_number(metrics.get(m.name), ".2f") for m in COMPILE_TIMES)


SUMMARY_HEADERS = ("workload", *(SHORT[axis] for axis in SHOWN_AXES), "status", "speedup",
                   f"compile {'/'.join(m.line_label for m in COMPILE_TIMES)} s", "graph breaks", "recompiles")


def summary_table(results: Sequence[dict]) -> str:
    rows = []
    for result in results:
        config, metrics = result["config"], result.get("metrics") or {}
        rows.append(
            (
                result["workload"],
                *(config[axis] for axis in SHOWN_AXES),
                result["status"],
                _speedup_cell(metrics),
                _compile_cell(metrics),
                _number(metrics.get("graph_break_count"), "d"),
                _number(metrics.get("recompile_count"), "d"),
            )
        )
    return format_table(SUMMARY_HEADERS, rows)


def status_counts(results: Sequence[dict]) -> str:
    counts: dict[str, int] = {}
    for result in results:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items(), key=lambda item: -item[1]))
