"""The compile paths are configurations like any other (docs/compile-paths.md): documents with
aot_inductor and export results, their path phases and a data-dependent failure, stored through the
real ingest and read back on the workload page, /compare/, /dynamic/ (export time backed vs
unbacked), the API, and by detection."""
from __future__ import annotations

import os

import pytest

from dashboard.regressions.models import Regression
from dashboard.regressions.services import detection_run
from dashboard.results.models import Result
from tests.fixtures.browser import open_page
from tests.dashboard.page_history import ingest_build, ref_for_day
from tests.documents import make_result

PHASES = {"export_s": 0.4, "package_s": 18.8, "load_s": 0.25, "first_call_s": 0.01}


def path_case(mode: str, regime: str, *, export_s: float, speedup: float, status: str = "pass") -> dict:
    phases = {**PHASES, "export_s": export_s} if mode == "aot_inductor" else {"export_s": export_s, "first_call_s": 6.0}
    result = make_result("mlp_loop", regime, mode=mode, status=status, speedup=speedup if status == "pass" else None,
                         compile_time_cold_s=sum(phases.values()))
    result["path_phases"] = phases
    result["environment"] = {"compile_path": {"path": mode, "dynamic_shapes": "Dim.DYNAMIC" if regime == "backed" else "mark_unbacked (strict export)",
                                              "unbacked_symbols": 0 if regime == "backed" else 1, "guards": 12}}
    if status == "data_dependent_error":
        result["error"] = {"type": "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
                           "message": "data-dependent guard Eq(u0, 1) at model.py:7 in forward: Could not guard on data-dependent expression Eq(u0, 1)"}
    return result


def two_builds() -> dict:
    ingest_build(1, [
        path_case("aot_inductor", "backed", export_s=0.4, speedup=1.5), path_case("aot_inductor", "unbacked", export_s=0.8, speedup=1.2),
        path_case("export", "backed", export_s=0.5, speedup=1.1), path_case("export", "unbacked", export_s=2.0, speedup=0.55),
        make_result("mlp_loop", "backed"), make_result("mlp_loop", "unbacked"),
    ])
    return ingest_build(2, [
        path_case("aot_inductor", "backed", export_s=0.4, speedup=1.2), path_case("aot_inductor", "unbacked", export_s=0.8, speedup=1.2, status="data_dependent_error"),
        path_case("export", "backed", export_s=0.5, speedup=1.1), path_case("export", "unbacked", export_s=2.0, speedup=0.55),
        make_result("mlp_loop", "backed"), make_result("mlp_loop", "unbacked"),
    ])


def dynamic_rows(html: str) -> dict[str, str]:
    table = html.split('id="dynamic-table"')[1].split("</table>")[0]
    return {row.split('">', 2)[2].split("</a>")[0]: row for row in table.split("<tr class=")[1:]}


@pytest.mark.django_db
def test_an_aot_inductor_result_is_stored_shown_compared_and_detected(client):
    day2 = two_builds()
    stored = Result.objects.get(build__git_sha__startswith=ref_for_day(2), config__tags__compile_mode="aot_inductor", config__tags__shape_regime="backed")
    assert stored.path_phases == PHASES

    page = client.get("/workloads/mlp_loop/?mode=aot_inductor&regime=backed&dtype=float32").content.decode()
    assert "aot_inductor · backed · float32" in page and "aot_inductor · unbacked · float32" in page
    phases = page.split('id="path-phases"')[1].split("</p>")[0]
    for text in ("export 0.40 s", "package 18.80 s", "load 0.25 s", "first call 0.01 s", "dynamic shapes Dim.DYNAMIC", "unbacked symbols 0", "guards 12"):
        assert text in phases, text
    assert "data_dependent_error" in client.get("/workloads/mlp_loop/?mode=aot_inductor&regime=unbacked&dtype=float32").content.decode()

    compare = client.get(f"/compare/?base={ref_for_day(1)}&head={ref_for_day(2)}&filter=regressed").content.decode()
    table = compare.split('id="compare-table"')[1].split("</table>")[0]
    assert "aot_inductor" in table and "1.500× → 1.200×" in table and "-20.0%" in table

    answer = client.get("/api/v1/results/?compile_mode=aot_inductor&shape_regime=backed").json()
    assert {tuple(sorted(r["path_phases"].items())) for r in answer["results"]} == {tuple(sorted(PHASES.items()))}

    # The unbacked package's data-dependent error is a status finding like any other failure.
    detection_run(run_id=day2["run"]["id"])
    finding = Regression.objects.get(series__config__tags__compile_mode="aot_inductor", series__config__tags__shape_regime="unbacked")
    assert finding.finding == "started_failing" and finding.first_bad_build.git_sha.startswith(ref_for_day(2))


@pytest.mark.django_db
def test_dynamic_shows_export_time_and_runtime_backed_against_unbacked(client):
    two_builds()
    html = client.get("/dynamic/?mode=export").content.decode()
    assert "export backed / unbacked" in html and "export-time ratio" in html and 'id="dynamic-path-note"' in html
    row = dynamic_rows(html)["mlp_loop"]
    assert "1.100×" in row and "0.550×" in row and "0.500" in row  # runtime: the unbacked gap
    assert "0.50 s / 2.00 s" in row and "4.000" in row  # export time and its ratio
    failed = dynamic_rows(client.get("/dynamic/?mode=aot_inductor").content.decode())["mlp_loop"]
    assert "unbacked data_dependent_error" in failed and "0.40 s / 0.80 s" in failed
    plain = client.get("/dynamic/?mode=default")
    assert plain.status_code == 200 and "mlp_loop" in dynamic_rows(plain.content.decode())
    plain = plain.content.decode()
    assert "export backed / unbacked" not in plain and 'id="dynamic-path-note"' not in plain


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_paths_as_a_person_reads_them(browser, live_server):
    two_builds()
    page, problems = open_page(browser, f"{live_server.url}/dynamic/?mode=export", viewport={"width": 1500, "height": 1000})
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "dynamic-export.png"), full_page=True)
    header = page.locator("#dynamic-table th").all_inner_texts()
    cells = dict(zip(header, page.locator("#dynamic-table tbody tr").first.locator("td").all_inner_texts()))
    assert cells["export backed / unbacked"] == "0.50 s / 2.00 s" and cells["export-time ratio"] == "4.000"
    assert cells["gap (unbacked / backed)"].startswith("0.500")
    assert page.locator("select[name=mode]").evaluate("s => [...s.options].map(o => o.value)") == ["aot_inductor", "default", "export"]

    page.goto(f"{live_server.url}/workloads/mlp_loop/?mode=aot_inductor&regime=backed&dtype=float32")
    if os.environ.get("PTBENCH_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["PTBENCH_SCREENSHOTS"], "workload-aot-inductor.png"), full_page=True)
    assert page.locator(".path-phase").all_inner_texts() == ["export 0.40 s", "package 18.80 s", "load 0.25 s", "first call 0.01 s"]
    rows = page.locator("table.latest tbody tr").all_inner_texts()
    assert any(r.startswith("aot_inductor · unbacked · float32") and "data_dependent_error" in r for r in rows)
    assert problems == []


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_family_model_through_every_path_on_the_real_h100_documents_fits_the_window(browser, live_server):
    """hf:GPT2ForSequenceClassification on the H100 (bench/results/compile-paths-gpu-2026-11-28 and
    the families' documents, imported as the quick start does): nine configurations in the latest
    figures, AOTInductor among them since the runner made torch's libstdc++ global, within 1400 px
    (1747 px before the table's build refs, error types and configurations could wrap)."""
    from pathlib import Path

    from dashboard.pipeline.services import run_ingest_and_detect

    results = Path(__file__).resolve().parents[2] / "bench/results"
    documents = [*(results / "families/locked-static").glob("hf-*.json"), *(results / "families/locked-dynamic").glob("*.json"),
                 *(results / "families/regimes-2026-11-27").glob("h100-*.json"), *(results / "compile-paths-gpu-2026-11-25").glob("*.json"), *(results / "compile-paths-gpu-2026-11-27").glob("h100-*.json"),
                 *(results / "compile-paths-gpu-2026-11-28").glob("h100-*.json")]
    for path in sorted(documents):
        if b"GPT2ForSequenceClassification" in path.read_bytes():
            run_ingest_and_detect(document=path.read_bytes(), imported=True)
    page, problems = open_page(browser, f"{live_server.url}/workloads/hf:GPT2ForSequenceClassification/"
                               "?machine=gpu-h100&mode=aot_inductor&regime=static&dtype=bfloat16", viewport={"width": 1400, "height": 900})
    rows = {row.locator("td").first.inner_text().replace("\n", " "): row.inner_text().replace("\n", " ")
            for row in page.locator("table.latest tbody tr").all()}
    assert {"aot_inductor · static · bfloat16", "cpp_wrapper · static · bfloat16", "export · static · bfloat16",
            "freezing · static · bfloat16", "default · unbacked (batch) · bfloat16"} <= set(rows)
    aoti = rows["aot_inductor · static · bfloat16"]
    assert "pass" in aoti and "1.798×" in aoti and "81.94 s" in aoti
    # Its second shape failed to compile: the figures beside the error are the first shape's, and say so.
    batch = rows["default · unbacked (batch) · bfloat16"]
    assert "compile_error" in batch and "1.891×" in batch and "its figures: measured before the error" in batch
    assert "measured before the error" not in rows["default · unbacked (sequence) · bfloat16"]  # it has none
    phases = " ".join(page.inner_text("#path-phases").split())
    assert "export 1.11 s · package 79.78 s · load 0.29 s" in phases
    # The runs' notes: each once, with the configurations of the table it covers.
    notes = page.locator("#latest-run-notes li.note")
    covered = {}
    for item in notes.all():
        labels = " ".join(item.locator(".note-configs").inner_text().split())
        note = " ".join(item.inner_text().split()).removesuffix(labels).strip()
        covered[note] = labels.removeprefix("(").removesuffix(")").split("; ")
    assert notes.count() == len(covered) >= 3
    assert {label for labels in covered.values() for label in labels} <= set(rows), (covered, list(rows))
    aoti_notes = [note for note, labels in covered.items() if "aot_inductor · static · bfloat16" in labels]
    assert len(aoti_notes) == 1 and "sharing it through the GPU timing lock" in aoti_notes[0]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert problems == []
