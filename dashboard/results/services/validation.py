"""What a run document must satisfy before it is stored, beyond its schema: storable values (integer
limits, workload names, ranges), each refusal naming its field."""
from __future__ import annotations

import re

from django.db import connection, models

from dashboard.results.models import Machine, Result
from contract.document import METRIC_NAMES, DocumentError
from contract.values import value_problems


# --- what the database cannot store ----------------------------------------------------------------
def storable_errors(value, path: list) -> list[DocumentError]:
    """What PostgreSQL cannot store, or JSON cannot carry back, anywhere in a parsed JSON value
    (``contract.values``: NUL and unpaired surrogates, NaN and infinite numbers, nesting past its
    limit), named by path (``path``: where ``value`` is in the document)."""
    return [DocumentError(field, message) for field, message in value_problems(value, path)]


def _integer_limits(model, names) -> dict[str, tuple[int, int]]:
    """The range of each integer column among ``names`` on this database (int4 or int8)."""
    limits = {}
    for name in names:
        field = model._meta.get_field(name)
        if isinstance(field, models.IntegerField):
            low, high = connection.ops.integer_field_range(field.get_internal_type())
            limits[name] = (-(2**63) if low is None else low, 2**63 - 1 if high is None else high)
    return limits


# A workload's name is part of its page's URL (/workloads/<name>/): slashes are fine (hf/bert-base),
# a segment that climbs out of it is not (../../admin/x linked to /admin/x/), nor a backslash
# (browsers read it as a slash) or a control character.
_BAD_WORKLOAD_NAME = re.compile(r"^/|//|/$|(^|/)\.\.?(/|$)|[\\\x01-\x1f\x7f]")  # NUL: storable_errors


def workload_name_errors(document) -> list[DocumentError]:
    """Workload names (declared and in results) that would not stay inside their page's URL."""
    errors = []

    def check(name, where: str) -> None:
        if isinstance(name, str) and name and _BAD_WORKLOAD_NAME.search(name):
            errors.append(DocumentError(where, f"{name[:80]!r} may not have an empty, '.' or '..' segment, "
                                               "a backslash or a control character (it is part of the workload's URL)"))

    for key, field in (("workloads", "name"), ("results", "workload")):
        items = document.get(key) if isinstance(document, dict) else None
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                check(item.get(field), f"{key}[{index}].{field}")
    return errors


def range_errors(document) -> list[DocumentError]:
    """Integers the document's schema allows but their columns cannot hold (a cpu_count of 2**32)."""
    errors = []

    def check(value, where: str, limit: tuple[int, int]) -> None:
        # JSON Schema counts 3e9 as an integer: a float that is one is checked as one (it reached
        # PostgreSQL as a 500 before, issue #46 item 9).
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if whole and not isinstance(value, bool) and not limit[0] <= value <= limit[1]:
            errors.append(DocumentError(where, f"{value:g} is outside {limit[0]}..{limit[1]}" if isinstance(value, float)
                                        else f"{value} is outside {limit[0]}..{limit[1]}"))

    machine = document.get("machine") if isinstance(document, dict) else None
    if isinstance(machine, dict):
        for name, limit in _integer_limits(Machine, ("cpu_count", "gpu_count", "memory_bytes")).items():
            check(machine.get(name), f"machine.{name}", limit)
    results = document.get("results") if isinstance(document, dict) else None
    if isinstance(results, list):
        limits = _integer_limits(Result, METRIC_NAMES)
        for index, item in enumerate(results):
            metrics = item.get("metrics") if isinstance(item, dict) else None
            if isinstance(metrics, dict):
                for name, limit in limits.items():
                    check(metrics.get(name), f"results[{index}].metrics.{name}", limit)
    return errors
