"""bench/families_table.py's cost columns (docs/families.md, "Cost"): a static case's seconds outside
its cold compile, the family's median of them, and the --cost lines."""
from __future__ import annotations

import json

from bench.families_table import main, non_compile_s, summarise
from tests.documents import make_result


def case(workload: str, regime: str, *, wall: float | None, compile_s: float | None, ends: dict | None = None) -> dict:
    result = make_result(workload, regime, compile_time_cold_s=compile_s)
    result["environment"] = {"phase_end_s": ends or {}}
    if wall is not None:
        result["environment"]["process_wall_s"] = {"cold": wall}
    return result


def test_outside_the_compile_is_the_process_wall_else_the_last_stamp_minus_the_cold_compile():
    assert non_compile_s(case("hf:A", "static", wall=40.0, compile_s=15.0, ends={"done": 30.0})) == 25.0
    assert non_compile_s(case("hf:A", "static", wall=None, compile_s=15.0, ends={"eager": 5.0, "done": 31.0})) == 16.0
    assert non_compile_s(case("hf:A", "static", wall=40.0, compile_s=None)) is None  # never compiled


def test_a_family_row_has_the_median_over_its_static_cases_only(tmp_path, capsys):
    results = [case("hf:A", "static", wall=30.0, compile_s=10.0), case("hf:B", "static", wall=50.0, compile_s=10.0),
               case("hf:C", "static", wall=70.0, compile_s=20.0), case("hf:A", "backed", wall=500.0, compile_s=1.0),
               case("hf:D", "static", wall=90.0, compile_s=None)]
    row = summarise(results)["hf"]
    assert (row["median_non_compile_s"], row["costed"]) == (40.0, 3)
    results[1]["environment"]["gpu_lock_wait_s"] = 12.0  # hf:B waited 12 s of its 40 for the GPU
    assert summarise(results)["hf"]["median_non_compile_less_lock_s"] == 28.0
    del results[1]["environment"]["gpu_lock_wait_s"]
    results[0]["cost"] = {"build": 4.0, "recompiles": 0.004}
    results[0]["environment"].update(eager_parts_s={"device": 1.5, "build": 2.0}, gpu_lock_wait_s=0.25)
    document = tmp_path / "run.json"
    document.write_text(json.dumps({"results": results}))
    assert main([str(document), "--cost"]) == 0
    out = capsys.readouterr().out
    assert "| 40.0 (3; 40.0) |" in out  # median, cases, median less lock waits
    line = next(text for text in out.splitlines() if text.strip().startswith("hf:A") and "outside" in text)
    assert "wall 30.0 compile 10.0 outside 20.0 | build=4 recompiles=0.004 | eager: device=1.5 build=2 | lock wait 0.2" in line
    assert not any("backed" in text for text in out.splitlines() if "outside" in text)
