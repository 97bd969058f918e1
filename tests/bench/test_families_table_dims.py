"""bench/families_table.py counts dynamic cases per regime and dims, and pairs each unbacked case with
the backed case of the same model and dims, else with the backed case on every dim, naming which
(docs/case-config.md, docs/families.md); a training step is its family's own row."""
from __future__ import annotations

import pytest

from bench.families_table import summarise
from tests.documents import make_result


def case(regime: str, speedup: float, dims: list[str] | None = None, *, workload: str = "hf:BertForMaskedLM",
         status: str = "pass") -> dict:
    result = make_result(workload, regime, speedup=speedup)
    result["status"] = status
    if dims:
        result["config"]["dims"] = dims
    return result


def test_unbacked_pairs_with_backed_of_the_same_dims_first():
    table = summarise([case("static", 2.0), case("backed", 2.0), case("unbacked", 2.0),
                       case("backed", 2.0, ["batch"]), case("unbacked", 1.0, ["batch"])])
    row = table["hf"]
    assert row["dynamic_passes"] == {"backed": "1/1", "backed [batch]": "1/1", "unbacked": "1/1", "unbacked [batch]": "1/1"}
    assert row["unbacked_over_backed"]["unbacked [batch]"] == {"ratio": 0.5, "pairs": 1, "failed": 0, "against": "backed [batch]"}
    assert row["unbacked_over_backed"]["unbacked"]["ratio"] == 1.0 and row["static_pass"] == "1/1"


def test_without_a_backed_case_of_its_dims_unbacked_pairs_with_backed_on_every_dim():
    table = summarise([case("backed", 2.0), case("unbacked", 2.5, ["batch"]),
                       case("unbacked", 0.0, ["sequence"], status="compile_error"),
                       case("backed", 1.0, workload="hf:T5Small"), case("unbacked", 0.5, ["sequence"], workload="hf:T5Small")])
    ratios = table["hf"]["unbacked_over_backed"]
    assert ratios["unbacked [batch]"] == {"ratio": 1.25, "pairs": 1, "failed": 0, "against": "backed on every dim"}
    assert ratios["unbacked [sequence]"]["pairs"] == 1 and ratios["unbacked [sequence]"]["failed"] == 1
    assert ratios["unbacked [sequence]"]["ratio"] == pytest.approx(0.5)
    assert table["hf"]["dynamic_passes"]["unbacked [sequence]"] == "1/2"


def test_a_training_step_is_its_own_row():
    table = summarise([case("static", 2.0), case("static", 1.5, workload="hf:BertForMaskedLM@train")])
    assert sorted(table) == ["hf", "hf train"] and table["hf train"]["geomean_speedup"] == 1.5


def _document(card: str, *results: dict) -> dict:
    return {"machine": {"machine_class": f"gpu-{card}"}, "results": list(results)}


def test_by_model_says_each_cells_card_and_marks_a_ratio_across_cards(tmp_path, capsys):
    import json

    from bench.families_table import main

    h100 = tmp_path / "h100.json"
    h100.write_text(json.dumps(_document("h100", case("static", 2.0), case("backed", 2.0, ["batch"]),
                                         case("unbacked", 1.0, ["batch"]), case("backed", 1.0, ["batch"], workload="hf:T5Small"))))
    h200 = tmp_path / "h200.json"
    h200.write_text(json.dumps(_document("h200", case("unbacked", 0.5, ["batch"], workload="hf:T5Small"),
                                         case("unbacked", 0.0, ["sequence"], status="compile_error"))))
    assert main(["--by-model", str(h100), str(h200)]) == 0
    rows = {line.split(" | ")[0]: line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]}
    bert, t5 = rows["hf:BertForMaskedLM"], rows["hf:T5Small"]
    assert bert[1:7] == ["2.000 (h100)", "-", "2.000 (h100)", "1.000 (h100)", "-", "compile_error (h200)"]
    assert bert[7:] == ["0.500", "-"]
    assert t5[3:5] == ["1.000 (h100)", "0.500 (h200)"] and t5[7] == "0.500 (cards differ)"
