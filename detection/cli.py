"""``python -m detection FILE``: replay series online and print their alerts as JSON.

FILE (or ``-`` for standard input) holds a JSON list of series::

    [{"id": "bert/static/speedup", "values": [1.05, 1.06, null, ...],
      "samples": [[1.04, 1.06, ...], null, ...],      # optional, one entry per value
      "direction": "higher_is_better",                # or "lower_is_better"
      "noise_history": 0.004}]                        # optional

Prints ``[{"id": ..., "alerts": [...], "suspect": {...} | null}, ...]`` in input order; each alert
has ``first_bad`` (index of the first bad point), ``raised_at`` (index of the point that raised it),
``magnitude``, ``confidence`` and the other fields of ``ChangePoint``. A bad input prints every
problem, each naming its field (``series[3].values[7]: not a number``), and exits with status 2.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from .api import detect
from .types import DIRECTIONS

MAX_ERRORS = 20


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate(doc) -> list[str]:
    """Problems of a parsed input document, each naming its field; [] when it is valid."""
    if not isinstance(doc, list):
        return [f"top level: expected a JSON list of series, got {type(doc).__name__}"]
    errors: list[str] = []
    for i, s in enumerate(doc):
        where = f"series[{i}]"
        if not isinstance(s, dict):
            errors.append(f"{where}: expected an object, got {type(s).__name__}")
            continue
        if "id" not in s:
            errors.append(f"{where}.id: missing")
        elif not isinstance(s["id"], (str, int)) or isinstance(s["id"], bool):
            errors.append(f"{where}.id: must be a string or an integer")
        direction = s.get("direction")
        if direction is None:
            errors.append(f"{where}.direction: missing (one of {', '.join(DIRECTIONS)})")
        elif direction not in DIRECTIONS:
            errors.append(f"{where}.direction: {direction!r} is not one of {', '.join(DIRECTIONS)}")
        values = s.get("values")
        if values is None:
            errors.append(f"{where}.values: missing")
        elif not isinstance(values, list):
            errors.append(f"{where}.values: expected a list of numbers, got {type(values).__name__}")
        else:
            for j, v in enumerate(values):
                if v is None:
                    continue
                if not _is_number(v):
                    errors.append(f"{where}.values[{j}]: not a number ({json.dumps(v)[:40]})")
                elif math.isfinite(v) and v <= 0:
                    errors.append(f"{where}.values[{j}]: {v} is not positive")
        samples = s.get("samples")
        if samples is not None:
            if not isinstance(samples, list):
                errors.append(f"{where}.samples: expected a list (one entry per value), got {type(samples).__name__}")
            else:
                if isinstance(values, list) and len(samples) != len(values):
                    errors.append(f"{where}.samples: {len(samples)} entries for {len(values)} values")
                for j, run in enumerate(samples):
                    if run is None:
                        continue
                    if not isinstance(run, list):
                        errors.append(f"{where}.samples[{j}]: expected a list of numbers or null")
                        continue
                    for k, v in enumerate(run):
                        if not _is_number(v):
                            errors.append(f"{where}.samples[{j}][{k}]: not a number ({json.dumps(v)[:40]})")
        noise = s.get("noise_history")
        if noise is not None and (not _is_number(noise) or not noise > 0):
            errors.append(f"{where}.noise_history: must be a positive number")
        if len(errors) >= MAX_ERRORS:
            break
    return errors


def run(doc) -> list[dict]:
    out = []
    for s in doc:
        cps = detect(s["values"], direction=s["direction"], samples=s.get("samples"),
                     noise_history=s.get("noise_history"))
        alerts = [cp.to_dict() for cp in cps if cp.state == "alert"]
        suspect = next((cp.to_dict() for cp in cps if cp.state == "suspect"), None)
        out.append({"id": s["id"], "alerts": alerts, "suspect": suspect})
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 1 else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    path = argv[0]
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        print(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=sys.stderr)
        return 2
    errors = validate(doc)
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        return 2
    json.dump(run(doc), sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")
    return 0
