"""A mistyped machine class, workload or filter value is a 400 naming it with the value probably meant,
never an empty answer or a verdict that waits; the board's own filter values are API values (#42 item 6)."""
from __future__ import annotations

import pytest

from tests.fixtures.api import fields
from tests.api.history import document_for_day, post
from tests.dashboard.page_history import ref_for_day
from tests.documents import make_result


@pytest.fixture
def stored(writer):
    for machine_class in ("cpu", "gpu-h100"):
        document = document_for_day(1, [make_result("mlp_loop", "static"), make_result("resnet_train", "static")],
                                    machine_class=machine_class)
        assert post(writer, document).status_code == 201
    return writer


def error(response) -> str:
    assert response.status_code == 400, response.content
    return response.json()["detail"]


def test_unknown_names_are_400s_with_a_did_you_mean(stored):
    api = stored
    assert fields(api.get("/api/v1/results/", {"workload": "resnet_trian"})) == ["workload"]
    assert "unknown workload 'resnet_trian'; did you mean 'resnet_train'?" in error(
        api.get("/api/v1/results/", {"workload": "resnet_trian"}))
    assert "unknown machine class 'gpu-h10'; did you mean 'gpu-h100'? (known: cpu, gpu-h100)" in error(
        api.get("/api/v1/series/", {"machine_class": "gpu-h10"}))
    verdict = api.get("/api/v1/verdict/", {"build": ref_for_day(1), "machine_class": "cpu-amd-epyc-4c"})
    assert fields(verdict) == ["machine_class"] and "unknown machine class 'cpu-amd-epyc-4c'" in error(verdict)
    assert "unknown metric 'speedp'; did you mean 'speedup'?" in error(api.get("/api/v1/regressions/", {"metric": "speedp"}))
    assert "unknown status 'opne'; did you mean 'open'?" in error(api.get("/api/v1/regressions/", {"status": "opne"}))
    assert "unknown metric 'speeduq'; did you mean 'speedup'?" in error(
        api.get("/api/v1/compare/", {"head": ref_for_day(1), "machine_class": "cpu", "metric": "speeduq"}))
    # the board's parameter name for the class: named, with the API's
    assert "did you mean 'machine_class'?" in error(api.get("/api/v1/regressions/", {"machine": "cpu"}))
    # known names with nothing stored are an empty answer, not an error
    assert api.get("/api/v1/results/", {"workload": "bert_encoder"}).json()["count"] == 0


def test_the_boards_filter_values_are_api_values(stored):
    for query in ({"status": "all"}, {"kind": "all"}, {"status": "open", "kind": "improvement"},
                  {"finding": "started_failing", "machine_class": "cpu", "workload": "mlp_loop"}):
        assert stored.get("/api/v1/regressions/", query).status_code == 200, query
