"""Celery tasks of the pipeline. GPU workers have no database: they send the document here."""
from celery import shared_task

from contract.document import InvalidDocument
from dashboard.durable import DB_RETRY
from dashboard.pipeline.services import run_ingest_and_detect


@shared_task(name="results.ingest_run_document", queue="ingest", acks_late=True, **DB_RETRY)
def ingest_run_document(document: dict) -> dict:
    """Store a run document (idempotent) and detect it. A bad document is answered, not retried:
    retrying cannot fix it; the database unreachable is retried (``DB_RETRY``)."""
    try:
        return {"ok": True, **run_ingest_and_detect(document=document).as_dict()}
    except InvalidDocument as exc:
        return {"ok": False, "errors": [{"field": e.field, "message": e.message} for e in exc.errors]}
