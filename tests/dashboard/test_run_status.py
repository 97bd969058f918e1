"""Run status has one writer; the summaries follow a run that opens or closes."""
import pytest

from dashboard.results.models import BuildSummary, Run
from dashboard.results.run_status import run_status_set
from dashboard.results.services import run_ingest
from tests.documents import make_document

pytestmark = pytest.mark.django_db


def in_progress(run: Run) -> bool:
    return BuildSummary.objects.get(build_id=run.build_id, machine_class=run.machine.machine_class).in_progress


def test_the_summary_follows_a_run_that_opens_and_closes():
    run = Run.objects.select_related("machine").get(pk=run_ingest(document=make_document()).run_id)
    assert not in_progress(run)
    run_status_set(run=run, status=Run.Status.RUNNING, finished_at=None)
    assert in_progress(run) and Run.objects.get(pk=run.pk).finished_at is None
    run_status_set(run=run, status=Run.Status.FAILED, notes="lost")
    assert not in_progress(run)
    stored = Run.objects.get(pk=run.pk)
    assert (stored.status, stored.notes) == (Run.Status.FAILED, "lost")
