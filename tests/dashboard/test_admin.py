"""The Django admin: every model's list, search and detail pages work on ingested data."""
from __future__ import annotations

import pytest

from dashboard.results.models import Build, Config, Machine, Result, Run, Series, Workload
from dashboard.pipeline.services import run_ingest_and_detect
from tests.documents import make_document

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Build, Config, Machine, Result, Run, Series, Workload])
def test_list_search_and_detail_pages_load(admin_client, model):
    run_ingest_and_detect(document=make_document())
    base = f"/admin/results/{model._meta.model_name}/"
    listing = admin_client.get(base)
    assert listing.status_code == 200
    assert admin_client.get(base, {"q": "mlp"}).status_code == 200
    detail = admin_client.get(f"{base}{model.objects.first().pk}/change/")
    assert detail.status_code == 200


def test_results_are_read_only_in_the_admin(admin_client):
    run_ingest_and_detect(document=make_document())
    result = Result.objects.first()
    assert admin_client.get("/admin/results/result/add/").status_code == 403
    page = admin_client.get(f"/admin/results/result/{result.pk}/change/").content.decode()
    assert 'name="speedup"' not in page  # shown, not editable
    run_page = admin_client.get(f"/admin/results/run/{result.run_id}/change/").content.decode()
    assert "mlp_loop" in run_page and "resnet_train" in run_page  # the run's results inline
