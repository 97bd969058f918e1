"""The run page (#17 item 9): a title naming suite, torch, build ref and class; repro commands with
a copy button that wrap between words; no speedup interval below zero."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dashboard.results.services import run_ingest
from tests.documents import make_document, make_result

pytestmark = pytest.mark.django_db


def test_run_page_title_names_suite_torch_build_and_class(client):
    document = make_document(git_sha="cf30153c4c131c8164ee7798e5022d810682e2cb")
    document["build"]["local_label"] = "cpu"
    document["machine"]["hostname"] = "(unassigned)"
    run = run_ingest(document=document)
    html = client.get(f"/runs/{run.run_id}/").content.decode()
    assert "<h1>tiny size · torch 2.13.0 (cf30153c4c13+cpu) · cpu</h1>" in html
    assert "<title>tiny size · torch 2.13.0 (cf30153c4c13+cpu) · cpu" in html
    assert "(unassigned)" not in html.split("<h1>")[1].split("</h1>")[0]


def test_repro_has_a_copy_button_and_the_speedup_interval_stays_above_zero(client):
    results = [make_result("mlp_loop", "static", speedup=0.5, speedup_noise=0.4),  # ±40 %: 0.357 .. 0.7 on the log scale
               make_result("resnet_train", "static", speedup=2.0, speedup_noise=0.1),
               make_result("mlp_loop", "backed", speedup=0.5, speedup_noise=1.5)]  # ±150 % (sd 47 %): too noisy
    run = run_ingest(document=make_document(results=results))
    html = client.get(f"/runs/{run.run_id}/").content.decode()
    assert html.count('class="copy" data-copy="#repro-') == 3  # one a case
    chart = json.loads(html.split('id="speedup-chart-data" type="application/json">')[1].split("</script>")[0])
    trace, backed = sorted(chart["traces"], key=lambda t: t["name"] != "static (default)")
    tracked = [trace["x"].index(name) for name in ("mlp_loop", "resnet_train")]
    lows = [trace["y"][i] - trace["noise_below"][i] for i in tracked]
    # the ratio interval value / (1 + h) .. value x (1 + h) (docs/noise-and-findings.md): never below zero
    assert lows == pytest.approx([0.5 / 1.4, 2.0 / 1.1]) and trace["noise"][tracked[0]] == pytest.approx(0.2)
    # too noisy to track: no error bar at all (0.2 .. 1.25 would say nothing), the bar says so
    assert (backed["noise"], backed["noise_below"], backed["note"]) == ([None], [None], ["too noisy"])
    assert [trace["note"][i] for i in tracked] == ["", ""]
    css = (Path(__file__).parents[2] / "dashboard/web/static/web/site.css").read_text()
    assert "word-break: break-all" not in css.split("code.repro {")[1].split("}")[0]
    assert "white-space: nowrap" in css.split("code.repro span {")[1].split("}")[0]  # breaks between words only
    assert "<span>--regimes</span> <span>static</span>" in html
