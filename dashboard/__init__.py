"""The ptbench dashboard: storage, ingest, detection, alerts, pages and API (Django)."""
from dashboard.celery import app as celery_app

__all__ = ["celery_app"]
