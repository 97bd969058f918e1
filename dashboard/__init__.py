"""The ptbench dashboard: storage, ingest, detection, alerts, pages and API (Django).

Imports ``contract`` and ``detection``, never ``workloads`` or torch; ``runner`` only where it runs a
build's interpreter (the in-process worker and build probing, listed in .importlinter)."""
from dashboard.celery import app as celery_app

__all__ = ["celery_app"]
