"""The pipeline: a stored run is detected after the commit, except a variant's, or with
DETECT_AFTER_INGEST off, or when the caller says so; results alone stores and sends nothing."""
import pytest

from dashboard.pipeline import services as pipeline
from dashboard.results.services import run_ingest
from tests.dashboard.test_variants import variant_document
from tests.documents import make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    run_ids = []
    monkeypatch.setattr(pipeline, "detection_enqueue", lambda *, run_id: run_ids.append(run_id))
    return run_ids


def test_a_stored_run_is_detected_once_it_commits(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        outcome = pipeline.run_ingest_and_detect(document=make_document())
        assert sent == []  # not before the commit
    assert sent == [outcome.run_id]


@pytest.mark.parametrize("case", ["setting off", "caller detects", "nothing new", "results only"])
def test_no_detection(case, sent, settings, django_capture_on_commit_callbacks):
    document = make_document()
    settings.DETECT_AFTER_INGEST = case != "setting off"
    if case == "nothing new":
        pipeline.run_ingest_and_detect(document=document, detect=False)
    with django_capture_on_commit_callbacks(execute=True):
        if case == "results only":
            run_ingest(document=document)
        else:
            pipeline.run_ingest_and_detect(document=document, detect=case != "caller detects")
    assert sent == []


def test_a_finished_dispatched_run_is_detected_a_variant_too(sent, django_capture_on_commit_callbacks):
    """A variant's run is detected too: judged against its base build, its regressions stored as
    findings (issue #42: variant verdicts are findings like any other)."""
    from dashboard.dispatch.signals import run_finished
    from dashboard.results.models import Run

    base = Run.objects.get(pk=run_ingest(document=make_document()).run_id)
    variant = Run.objects.get(pk=run_ingest(document=variant_document()).run_id)
    with django_capture_on_commit_callbacks(execute=True):
        run_finished.send(sender=Run, run=variant)
        run_finished.send(sender=Run, run=base)
    assert sent == [str(variant.id), str(base.id)]
