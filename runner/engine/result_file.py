"""The case subprocess's result: a record filled phase by phase and written to a file after each.

The parent names the file; stdout is left to the workload. Every write replaces the file
atomically, so a child killed mid-case (timeout, signal) still leaves the metrics of the phases it
finished, which the parent keeps next to the timeout or crash status.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from contract.document import METRIC_NAMES as METRIC_KEYS  # the schema's list
from contract.facts import CaseEnvironment


def finite_json(value: object) -> object:
    """``value`` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(item) for item in value]
    return value


@dataclass
class CaseRecord:
    status: str = "pass"
    metrics: dict = field(default_factory=lambda: dict.fromkeys(METRIC_KEYS))
    samples: dict | None = None
    graph_breaks: list = field(default_factory=list)
    recompiles: list = field(default_factory=list)
    error: dict | None = None
    environment: CaseEnvironment = field(default_factory=CaseEnvironment)  # declared facts only (contract.facts)
    path_phases: dict = field(default_factory=dict)  # a compile path's seconds per phase (runner.engine.paths)
    compile_phases: dict = field(default_factory=dict)  # "cold"/"warm" -> runner.engine.compile_records
    kernel_profile: dict | None = None  # runner.engine.kernel_profile
    phase_reached: str = "start"  # the last phase whose results are in this record

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "metrics": self.metrics,
            "samples": self.samples,
            "graph_breaks": self.graph_breaks,
            "recompiles": self.recompiles,
            "error": self.error,
            "environment": self.environment,
            "path_phases": self.path_phases,
            "compile_phases": self.compile_phases,
            "kernel_profile": self.kernel_profile,
            "phase_reached": self.phase_reached,
        }


class ResultFile:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._started = time.monotonic()

    def write(self, record: CaseRecord, phase_reached: str) -> None:
        record.phase_reached = phase_reached
        # Seconds since this case began when each phase finished: where a case's time goes
        # (the first entry includes importing torch and building the model).
        record.environment.setdefault("phase_end_s", {})[phase_reached] = round(time.monotonic() - self._started, 3)
        self.write_progress(record)

    def write_progress(self, record: CaseRecord) -> None:
        """The record as it stands, inside a phase: no phase reached, no stamp."""
        temporary = self.path.with_name(self.path.name + ".partial")
        temporary.write_text(json.dumps(finite_json(record.as_dict()), allow_nan=False))
        os.replace(temporary, self.path)

    def read(self) -> dict | None:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None
