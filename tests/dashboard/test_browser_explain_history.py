"""Compile phases over builds (issue #30): a history whose cold compile slows in one phase. Detection
stores the total's finding with its phases (a phase explains, issue #42) and its likeliest cause, and the regressions page, the API and the alert text show it
first; the workload page draws each phase over builds; the run page shows where its time went."""
from __future__ import annotations

import os
import random

import pytest

from dashboard.alerts.compose import run_message
from dashboard.alerts.models import Subscription, validate_metrics
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.models import Regression
from dashboard.regressions.services import detection_run
from dashboard.results.models import Run
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import sha_for
from tests.documents import WORKLOADS, make_document, make_result

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

COST = {"build": 1.0, "compile": 8.0, "accuracy": 0.1, "eager_timing": 0.4, "compiled_timing": 0.3, "memory": 0.1,
        "recompiles": 2.0, "profile": 0.05, "explain": 0.02, "warm": 4.0}


def _shot(page, name: str) -> None:
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], name), full_page=True)


def _phases(kernel_compile: float, rng: random.Random, lowering: float = 1.5) -> dict:
    noise = lambda: 1 + rng.gauss(0, 0.01)  # noqa: E731
    phases = {"dynamo": 0.8 * noise(), "guards": 0.05, "aot_autograd": 1.0 * noise(), "lowering": lowering * noise(),
              "codegen": 2.0 * noise(), "kernel_compile": kernel_compile * noise()}
    return {"phases": {k: round(v, 4) for k, v in phases.items()}, "total_s": round(sum(phases.values()), 4),
            "counts": {"guards": 12, "graphs": 1, "kernels": 4, "cache_hits": 0, "cache_misses": 2}}


def _ingest(day: int, kernel_compile: float, rng: random.Random, warm: dict | None = None) -> Run:
    cold = _phases(kernel_compile, rng)
    result = make_result("mlp_loop", "static", compile_time_cold_s=cold["total_s"] + 0.3, compile_time_warm_s=1.5)
    result["compile_phases"] = {"cold": cold, "warm": warm or _phases(0.5, rng)}
    if warm:
        result["metrics"]["compile_time_warm_s"] = warm["total_s"]
    result["cost"] = COST
    document = make_document(git_sha=sha_for(day), results=[result])
    document["schema_version"] = 2
    document["build"].update(commit_time=f"2026-11-{day:02d}T00:00:00+00:00", label=f"nightly {day}")
    document["workloads"] = WORKLOADS
    run_ingest_and_detect(document=document, detect=False)
    return Run.objects.get(pk=document["run"]["id"])


@pytest.fixture
def history() -> list[Run]:
    rng = random.Random(3)
    runs = [_ingest(day, 1.0, rng) for day in range(1, 9)] + [_ingest(day, 4.0, rng) for day in (9, 10)]
    for run in runs:
        detection_run(run_id=run.id)
    return runs


def test_a_compile_regression_names_the_phase_first_everywhere(history, browser, live_server, client):
    regression = Regression.objects.get(metric="compile_time_cold_s", kind="regression")
    # phases explain, the total alarms: no phase raises a finding of its own; the total's finding
    # carries every phase, the one that moved most first (contract.metrics: a phase explains its total)
    assert not Regression.objects.filter(metric__startswith="compile_phase_").exists()
    phases = regression.details["phases"]
    assert phases[0]["metric"] == "compile_phase_kernel_compile_s" and len(phases) >= 6
    assert phases[0]["before"] == pytest.approx(1.0, rel=0.05) and phases[0]["after"] == pytest.approx(4.0, rel=0.05)
    assert all(abs(p["change_s"]) < 0.2 for p in phases[1:])
    cause = regression.details["cause"]
    assert (cause["kind"], cause["name"]) == ("phase", "kernel_compile") and cause["share"] > 0.9
    assert cause["text"].startswith("kernel compile wait and load (cold): ")

    page, problems = open_page(browser, f"{live_server.url}/regressions/?status=all", viewport={"width": 1400, "height": 900})
    _shot(page, "regressions-cause.png")
    row = page.locator(f"tr.regression[data-id='{regression.id}']")
    assert row.locator(".cause").inner_text() == f"likeliest cause: {cause['text']}"
    row.locator("a.explain-link").click()
    page.wait_for_load_state("networkidle")
    assert "/explain/" in page.url and page.url.endswith("?metric=compile_time_cold_s")
    assert page.locator("#explain-cause .cause-text").inner_text() == cause["text"]
    cold = page.locator("#explain-phases tr[data-side='cold'][data-phase='kernel_compile'] td").all_inner_texts()
    assert cold[0] == "kernel compile wait and load" and cold[3].endswith(" s") and cold[4].endswith("%")
    assert 2.9 < float(cold[3][:-2]) < 3.1 and 90 <= int(cold[4][:-1]) <= 110  # 1 s -> 4 s of a ~3 s total change (others move by noise)
    _shot(page, "explain-compile.png")
    assert problems == []

    listed = client.get(f"/api/v1/regressions/{regression.id}/").json()
    assert listed["cause"]["name"] == "kernel_compile" and listed["cause"]["after_result"]
    text = run_message(run=history[-2], regressions=[regression],
                       subscription=Subscription.objects.create(name="s", channel="slack", target="http://127.0.0.1:9/")).text
    assert f"    likeliest cause: {cause['text']}\n" in text


def test_the_workload_page_draws_each_phase_and_the_run_page_its_cost(history, browser, live_server):
    page, problems = open_page(browser, f"{live_server.url}/workloads/mlp_loop/?machine=cpu&regime=static",
                               viewport={"width": 1400, "height": 900})
    page.wait_for_selector("#series-phases-cold .main-svg")
    _shot(page, "workload-phases.png")
    lines = page.evaluate("() => document.getElementById('series-phases-cold').data.filter(t => t.mode && t.mode.includes('lines'))"
                          ".map(t => [t.name, t.y.length, t.y[t.y.length - 1]])")
    names = [name for name, _, _ in lines]
    assert names == ["cold total", "Dynamo tracing", "guards", "AOTAutograd", "Inductor lowering", "code generation",
                     "kernel compile wait and load"]
    assert all(n == 10 for _, n, _ in lines)
    assert 3.9 < lines[-1][2] < 4.1
    assert page.locator("#series-phases-warm").count() == 1
    # the explain engineer's report: the legend (seven lines and the finding) overlapped the title
    for chart in ("series-phases-cold", "series-phases-warm"):
        title, legend = (page.locator(f"#{chart} {part}").bounding_box() for part in (".gtitle", ".legend"))
        apart = (legend["x"] >= title["x"] + title["width"] or title["x"] >= legend["x"] + legend["width"]
                 or legend["y"] >= title["y"] + title["height"] or title["y"] >= legend["y"] + legend["height"])
        assert apart, f"{chart}: legend {legend} overlaps title {title}"
        plot = page.locator(f"#{chart} .nsewdrag").bounding_box()  # nor does it cover the plot
        assert legend["x"] >= plot["x"] + plot["width"] or legend["y"] + legend["height"] <= plot["y"], (chart, legend, plot)
    # the cold total's finding is marked on the phases it is explained by, at its first bad build (the 9th of 10)
    marker = page.evaluate("() => document.getElementById('series-phases-cold').data.filter(t => t.name === 'detected change')"
                           ".map(t => [t.x.length, t.text])")
    assert len(marker) == 1 and marker[0][0] == 1 and marker[0][1][0].startswith("cold total: regression")
    assert problems == []

    page.goto(f"{live_server.url}/runs/{history[-1].id}/")
    _shot(page, "run-cost.png")
    cells = dict(zip(page.locator("#run-cost thead th").evaluate_all("c => c.map(x => x.dataset.step)"),
                     page.locator("#run-cost tr.total td").all_inner_texts()))
    assert cells["compile"].startswith("8.0 s") and "50%" in cells["compile"]
    assert list(cells)[:2] == ["build", "compile"] and cells["warm"].startswith("4.0 s")


@pytest.fixture
def warm_history() -> list[Run]:
    """The cold compile unchanged; the warm one's lowering 0.4 -> 2.4 s at the 9th build (a warm compile
    that lowers the graph again: its cache missed)."""
    rng = random.Random(5)
    runs = [_ingest(day, 1.0, rng, warm=_phases(0.2, rng, lowering=0.4 if day < 9 else 2.4)) for day in range(1, 11)]
    for run in runs:
        detection_run(run_id=run.id)
    return runs


def test_a_warm_phase_regression_explains_the_warm_total_everywhere(warm_history, browser, live_server, client):
    # the warm compile's phases explain its total as the cold one's do (contract.metrics): no phase finding
    assert not Regression.objects.filter(metric__startswith="compile_phase_").exists()
    finding = Regression.objects.get(metric="compile_time_warm_s", kind="regression")
    phase = finding.details["phases"][0]
    assert phase["metric"] == "compile_phase_warm_lowering_s"
    assert phase["before"] == pytest.approx(0.4, rel=0.05) and phase["after"] == pytest.approx(2.4, rel=0.05)
    assert finding.first_bad_build_id == warm_history[8].build_id
    assert not Regression.objects.filter(metric="compile_time_cold_s").exists()
    cause = finding.details["cause"]  # the warm compile's likeliest cause, not the cold one's
    assert (cause["kind"], cause["name"], cause["side"]) == ("phase", "lowering", "warm") and cause["share"] > 0.9
    assert cause["text"].startswith("Inductor lowering (warm): 0.4")

    page, problems = open_page(browser, f"{live_server.url}/regressions/?status=all", viewport={"width": 1400, "height": 900})
    _shot(page, "regressions-warm-phase.png")
    row = page.locator(f"tr.regression[data-id='{finding.id}']")
    assert "compile_time_warm_s" in row.inner_text()
    assert row.locator(".cause").inner_text() == f"likeliest cause: {cause['text']}"
    row.locator("a.explain-link").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("?metric=compile_time_warm_s")
    assert page.locator("#explain-cause .cause-text").inner_text() == cause["text"]
    warm = page.locator("#explain-phases tr[data-side='warm'][data-phase='lowering'] td").all_inner_texts()
    assert warm[0] == "Inductor lowering" and 1.9 < float(warm[3].removesuffix(" s")) < 2.1
    assert problems == []

    page.goto(f"{live_server.url}/workloads/mlp_loop/?machine=cpu&regime=static")
    page.wait_for_selector("#series-phases-warm .main-svg")
    _shot(page, "workload-warm-phases.png")
    markers = {chart: page.evaluate(f"() => document.getElementById('{chart}').data.filter(t => t.name === 'detected change')"
                                    ".map(t => t.text[0])") for chart in ("series-phases-cold", "series-phases-warm")}
    assert markers["series-phases-cold"] == [] and len(markers["series-phases-warm"]) == 1
    assert markers["series-phases-warm"][0].startswith("warm total: regression")

    listed = client.get(f"/api/v1/regressions/{finding.id}/").json()
    assert listed["metric"] == "compile_time_warm_s" and listed["cause"]["side"] == "warm"
    validate_metrics(["compile_phase_warm_lowering_s"])  # a subscription may still name a warm phase (none raised now)
    subscription = Subscription.objects.create(name="s", channel="slack", target="http://127.0.0.1:9/",
                                               metrics=["compile_time_warm_s"])
    text = run_message(run=warm_history[8], regressions=[finding], subscription=subscription).text
    assert "compile_time_warm_s" in text and f"    likeliest cause: {cause['text']}\n" in text
