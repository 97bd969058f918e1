"""Every table a page shows, also as CSV and JSON (``?format=csv`` / ``?format=json``).

A page hands its tables as ``{name: [row dict, ...]}`` (flat values, built by a selector); CSV is
one file with a leading ``table`` column, JSON is ``{"tables": {name: rows}}``.
"""
from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse, JsonResponse

from dashboard.web import params

FORMATS = ("html", "csv", "json")


def export_format(request) -> str:
    return params.choice(request, "format", FORMATS, "html")


def table_response(*, fmt: str, filename: str, tables: dict[str, list[dict]]) -> HttpResponse:
    if fmt == "json":
        response = JsonResponse({"tables": tables}, json_dumps_params={"indent": 1, "default": str})
    else:
        columns: list[str] = ["table"]
        for rows in tables.values():
            for row in rows:
                columns += [c for c in row if c not in columns]
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for name, rows in tables.items():
            for row in rows:
                writer.writerow({"table": name, **{k: _cell(v) for k, v in row.items()}})
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


def _cell(value):
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return "" if value is None else value
