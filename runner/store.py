"""Store a run document in the dashboard's database, through its one ingest service.

Django is imported only inside ``store_document``: the rest of ``runner`` runs on GPU workers that
have no Django installed.
"""
from __future__ import annotations

import os


def store_document(document: dict) -> str:
    """Ingest ``document`` with ``dashboard.results.services.run_ingest``; returns a one-line summary."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    import django

    django.setup()
    from dashboard.results.services import run_ingest

    outcome = run_ingest(document=document)
    verb = "stored" if outcome.created else "already stored"
    return f"run {outcome.run_id} {verb}: {outcome.results_created} results created"
