"""The run document's JSON schema (``contract/schema/run_document.v2.json``, draft 2020-12) as an
OpenAPI 3.0 schema object, for the submit operation: the docs page shows the real format and the
schema-driven fuzz test generates documents from it. One source of truth, converted, not copied."""
from __future__ import annotations

import copy

from contract.document import load_schema


def _convert(node, defs: dict):
    if isinstance(node, list):
        return [_convert(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:  # "#/$defs/<name>": inline it (the definitions are not recursive)
        target = _convert(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]), defs)
        extra = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **extra}
    out = {}
    for key, value in node.items():
        if key in ("$schema", "$id", "$defs"):
            continue
        if key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            if len(kinds) == 1:
                out["type"] = kinds[0]
            else:  # OpenAPI 3.0 has no list of types
                out["anyOf"] = [{"type": kind} for kind in kinds]
            if "null" in value:
                out["nullable"] = True
        elif key == "exclusiveMinimum" and not isinstance(value, bool):  # 2020-12's number, 3.0's flag
            out["minimum"], out["exclusiveMinimum"] = value, True
        elif key == "propertyNames":  # not in OpenAPI 3.0; the server checks names (contract/document.py)
            continue
        elif key == "const":
            out["enum"] = [value]
        elif key in ("properties",):
            out[key] = {name: _convert(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _convert(value, defs)
    if "enum" in out and "type" not in out:  # OpenAPI 3.0 wants a type next to enum
        values = out["enum"]
        if all(isinstance(v, str) for v in values):
            out["type"] = "string"
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out["type"] = "integer"
    return out


def run_document_schema() -> dict:
    source = load_schema()
    return _convert(copy.deepcopy(source), source.get("$defs", {}))


RUN_DOCUMENT_SCHEMA = run_document_schema()
