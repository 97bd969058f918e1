"""bench/families_table.py pairs backed with unbacked within the same dims: a batch-only pair is its
family's own row (``hf [batch]``), never mixed into the every-dim pair (docs/case-config.md)."""
from __future__ import annotations

from bench.families_table import summarise
from tests.documents import make_result


def case(regime: str, speedup: float, dims: list[str] | None = None) -> dict:
    result = make_result("hf:BertForMaskedLM", regime, speedup=speedup)
    if dims:
        result["config"]["dims"] = dims
    return result


def test_a_batch_only_pair_is_its_own_row():
    table = summarise([case("static", 2.0), case("backed", 2.0), case("unbacked", 2.0),
                       case("backed", 2.0, ["batch"]), case("unbacked", 1.0, ["batch"])])
    assert sorted(table) == ["hf", "hf [batch]"]
    assert table["hf"]["unbacked_over_backed"] == 1.0 and table["hf"]["pairs"] == 1
    assert table["hf [batch]"]["unbacked_over_backed"] == 0.5 and table["hf [batch]"]["static_pass"] == "0/0"
