"""Every table on /compare/ and /regressions/ as CSV and JSON (?format=csv / ?format=json)."""
from __future__ import annotations

import csv
import io

import pytest

from tests.dashboard.page_history import ingest_build, ref_for_day
from tests.documents import make_result
from tests.regressions.board_history import board_history

pytestmark = pytest.mark.django_db


def rows(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_compare_exports_its_tables_as_csv_and_json(client):
    ingest_build(1, [make_result("mlp_loop", speedup=1.25), make_result("mlp_loop", "backed", speedup=1.2)])
    ingest_build(2, [make_result("mlp_loop", speedup=1.0), make_result("resnet_train", speedup=1.1)])
    query = f"/compare/?base={ref_for_day(1)}&head={ref_for_day(2)}"
    data = client.get(query + "&format=json").json()["tables"]
    assert [(r["workload"], r["speedup_base"], r["speedup_head"]) for r in data["cases"]] == [("mlp_loop", 1.25, 1.0)]
    assert data["cases"][0]["speedup_change"] == pytest.approx(-0.2)
    assert [r["workload"] for r in data["only_in_base"]] == ["mlp_loop"] and [r["workload"] for r in data["only_in_head"]] == ["resnet_train"]
    response = client.get(query + "&format=csv")
    assert response["Content-Type"].startswith("text/csv") and "attachment" in response["Content-Disposition"]
    assert [(r["table"], r["workload"]) for r in rows(response)] == [("cases", "mlp_loop"), ("only_in_base", "mlp_loop"), ("only_in_head", "resnet_train")]
    assert client.get(query + "&format=xml").status_code == 400
    assert 'id="export-csv"' in client.get(query).content.decode()


def test_regressions_export_every_row_the_filters_keep_in_board_order(client):
    board_history()
    data = client.get("/regressions/?status=all&kind=all&format=json").json()["tables"]["regressions"]
    assert [r["build"] for r in data] == [ref_for_day(3)] * 3 + [ref_for_day(2), ref_for_day(1)]
    gap = next(r for r in data if r["metric"] == "dynamic_gap" and r["build"] == ref_for_day(2))
    assert (gap["before"], gap["after"]) == (pytest.approx(1.4493), pytest.approx(0.8082))
    csv_rows = rows(client.get("/regressions/?status=all&kind=all&machine=gpu-h100&format=csv"))
    assert [(r["machine_class"], r["metric"], r["confidence"]) for r in csv_rows] == [("gpu-h100", "speedup", "0.9")]
