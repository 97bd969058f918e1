"""The dashboard's own Celery queues. A machine class names its runner workers' queue, so no
machine class may take one of these names (its cases would go to the dashboard and be dropped)."""
from __future__ import annotations

DASHBOARD_QUEUES = ("ingest", "analysis", "alerts")


def machine_class_problem(name: object) -> str | None:
    """Why ``name`` cannot be a machine class, or None."""
    if name in DASHBOARD_QUEUES:
        return f"{name!r} is reserved (the dashboard's own queues: {', '.join(DASHBOARD_QUEUES)})"
    return None
